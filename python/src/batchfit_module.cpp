// batchfit._batchfit: the CLI's commands in process (runCli, the same option parsing, messages and JSON as
// batchfit-cli), the settings table and the local Hugging Face cache lookup. The Python API
// (python/batchfit/) is written on these; no Qt is linked.
#include "batchfit/cli_command.h"
#include "batchfit/hf_cache.h"
#include "batchfit/settings.h"
#include "cli_help.h"
#include "cli_run.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <sstream>
#include <stdexcept>

namespace py = pybind11;
using namespace batchfit;

namespace {

const char* typeName(SettingType t) {
    switch (t) {
    case SettingType::Switch:
        return "switch";
    case SettingType::Integer:
        return "integer";
    case SettingType::Number:
        return "number";
    case SettingType::Choice:
        return "choice";
    case SettingType::Bytes:
        return "bytes";
    case SettingType::Text:
        return "text";
    case SettingType::List:
        return "list";
    case SettingType::Lengths:
        return "lengths";
    }
    return "?";
}

const char* formName(FlagForm f) {
    switch (f) {
    case FlagForm::Value:
        return "value";
    case FlagForm::SetsTrue:
        return "sets_true";
    case FlagForm::SetsFalse:
        return "sets_false";
    }
    return "?";
}

py::list settingsList() {
    py::list out;
    for (const SettingInfo& s : settingsTable()) {
        py::dict d;
        d["key"] = s.key;
        d["flag"] = s.flag;
        d["label"] = s.label;
        d["help"] = s.help;
        d["type"] = typeName(s.type);
        d["form"] = formName(s.form);
        d["unit"] = s.unit;
        d["min"] = s.min;
        d["max"] = s.max;
        d["choices"] = s.choices;
        d["default"] = isDefaultSetting(s, s.defaultValue) && s.optional ? std::string()
                                                                         : settingText(s, s.defaultValue);
        out.append(d);
    }
    return out;
}

} // namespace

PYBIND11_MODULE(_batchfit, m) {
    m.doc() = "BatchFit's core, bound in process: run() is batchfit-cli without a subprocess.";
    m.def(
        "run",
        [](const std::vector<std::string>& args) {
            std::ostringstream out, err;
            int rc = 0;
            {
                py::gil_scoped_release release; // a replay can take a while; other threads go on
                rc = runCli(args, CliIo{out, err});
            }
            return py::make_tuple(rc, out.str(), err.str());
        },
        py::arg("args"),
        "Runs one batchfit-cli command line (without the program name): (exit code, stdout, stderr).");
    m.def("settings", &settingsList,
          "The training and serving settings, as batchfit/settings.h declares them.");
    m.def("help", &cliHelp, "batchfit-cli --help.");
    m.def("version", [] { return std::string(BATCHFIT_VERSION); });
    m.def(
        "find_cached_hf_config",
        [](const std::string& id) {
            auto path = findCachedHfConfig(id);
            if (!path) throw std::invalid_argument(path.error().message);
            return *path;
        },
        py::arg("model_id"),
        "The config.json of ORG/NAME in the local Hugging Face cache (never downloaded); ValueError if "
        "absent.");
    m.def("is_hf_model_id", &isHfModelId, py::arg("text"));
    m.def("python_estimate_call", &pythonEstimateCall, py::arg("arguments"),
          "An estimate command line as the batchfit.estimate call the desktop app's Copy as Python gives.");
}
