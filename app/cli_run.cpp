#include "cli_run.h"

#include "batchfit/estimator.h"
#include "batchfit/fit_plan.h"
#include "batchfit/hf_cache.h"
#include "batchfit/hf_import.h"
#include "batchfit/json_report.h"
#include "batchfit/measurement.h"
#include "batchfit/model_io.h"
#include "batchfit/onnx_import.h"
#include "batchfit/presets.h"
#include "batchfit/verdict_text.h"
#include "cli_allocator.h"
#include "cli_fit_map.h"
#include "cli_help.h"
#include "cli_serve.h"
#include "cli_text.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

using namespace batchfit;

namespace {

enum Exit { kOk = 0, kNoFit = 1, kUsage = 2, kBadInput = 3, kReportFailed = 4 };

int fail(std::ostream& err, int code, const std::string& msg) {
    err << "batchfit-cli: " << msg << "\n";
    return code;
}

/// printf into `out`.
[[gnu::format(printf, 2, 3)]] void put(std::ostream& out, const char* format, ...) {
    char buf[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(buf, sizeof buf, format, args);
    va_end(args);
    out << buf;
}

/// `fileModel`: the --model file's model, already read by main() with its training section.
Result<Model> loadModel(const CliOptions& o, std::optional<Model> fileModel) {
    if (!o.hfConfig.empty()) {
        // A model id (ORG/NAME) that is not a file: its config.json from the local Hugging Face cache.
        std::string path = o.hfConfig;
        if (!std::filesystem::exists(path) && isHfModelId(path)) {
            auto cached = findCachedHfConfig(path);
            if (!cached) return cached.error();
            path = *cached;
        }
        HfImportOptions hf{o.sequence, o.attention};
        if (o.moeLoad) hf.moeLoad = *o.moeLoad;
        if (o.moeImpl) hf.moeImpl = *o.moeImpl;
        return importHfConfigFile(path, hf);
    }
    if (!o.onnxFile.empty()) {
        OnnxImportOptions onnx;
        if (o.onnxLoss) {
            auto loss = parseOnnxLoss(*o.onnxLoss);
            if (!loss) return loss.error();
            onnx.loss = *loss;
        }
        onnx.allowOpaque = o.onnxAllowOpaque;
        return importOnnxFile(o.onnxFile, onnx);
    }
    if (fileModel) return std::move(*fileModel);
    return loadPreset(o.preset.empty() ? "resnet50" : o.preset);
}

int listPresets(const CliOptions& o, const CliIo& io) {
    for (const auto& p : presetList()) {
        auto m = loadPreset(p.id);
        auto e = m ? Estimator::create(*m, TrainingConfig{}) : Result<Estimator>(m.error());
        if (o.json) continue;
        put(io.out, "%-16s %-48s %15llu params\n", p.id.c_str(), p.title.c_str(),
            static_cast<unsigned long long>(e ? e->parameterCount() : 0));
    }
    if (o.json) {
        std::string s = "[\n";
        auto list = presetList();
        for (std::size_t i = 0; i < list.size(); ++i)
            s += "  {\"id\": \"" + list[i].id + "\", \"title\": \"" + list[i].title + "\"}" +
                 (i + 1 < list.size() ? ",\n" : "\n");
        io.out << s << "]\n";
    }
    return kOk;
}

int listGpus(const CliOptions& o, const CliIo& io) {
    if (o.json) {
        io.out << gpuCatalogueJson();
        return kOk;
    }
    // By family, the picker's groups; the capacity's source is in --json.
    for (const std::string& family : gpuFamilies()) {
        io.out << family << ":\n";
        for (const GpuSpec& g : gpuCatalogue())
            if (g.family == family)
                put(io.out, "  %-22s %-40s %-7s %10s\n", g.id.c_str(), g.name.c_str(), g.arch.c_str(),
                    formatBytes(g.memoryBytes).c_str());
    }
    return kOk;
}

// `gpus --fit`: which catalogue GPUs fit the model at the set-up given, and the largest batch on each.
int listGpuFits(const CliOptions& o, const Model& model, const CliIo& io) {
    const std::vector<GpuFit> fits = fitAcrossCatalogue(model, o.config);
    if (o.json) io.out << gpuFitsJson(fits);
    for (std::size_t i = 0; i < fits.size() && !o.json; ++i) {
        const GpuFit& f = fits[i];
        put(io.out, "%-22s %-40s %10s   %s\n", f.gpu.id.c_str(), f.gpu.name.c_str(),
            formatBytes(f.gpu.memoryBytes).c_str(),
            f.maxBatch > 0 ? ("largest batch " + std::to_string(f.maxBatch)).c_str() : "does not fit");
    }
    const auto smallest = smallestGpuThatFits(fits, o.batch);
    if (!o.json) {
        if (smallest)
            io.out << "Smallest GPU that fits batch " << o.batch << ": " << smallest->gpu.name << "\n";
        else
            io.out << "No catalogue GPU fits batch " << o.batch << "\n";
    }
    return smallest ? kOk : kNoFit;
}

// `fit-map`: the largest micro-batch and the tokens per step at each sequence length on --gpu; an
// --hf-config model is imported again at each length (from the local cache for a model id).
int fitMap(const CliOptions& o, const Model& model, const CliIo& io) {
    std::string hfPath = o.hfConfig;
    if (!hfPath.empty() && !std::filesystem::exists(hfPath) && isHfModelId(hfPath)) {
        auto cached = findCachedHfConfig(hfPath);
        if (!cached) return fail(io.err, kBadInput, cached.error().message);
        hfPath = *cached;
    }
    auto map = cliFitMap(o, model, hfPath);
    if (!map) return fail(io.err, kBadInput, map.error().message);
    io.out << (o.json ? fitMapJson(model, o.config, *o.gpu, *map) : fitMapText(model, *o.gpu, *map));
    for (const FitMapRow& r : map->rows)
        if (r.largest.largest > 0) return kOk;
    return kNoFit;
}

/// What is wrong with the options for a model command (empty when nothing).
std::string usageError(const CliOptions& o) {
    const auto usage = [](const char* message) { return std::string(message); };
    if (!o.preset.empty() + !o.modelFile.empty() + !o.hfConfig.empty() + !o.onnxFile.empty() > 1)
        return usage("give one of --preset, --model, --hf-config and --onnx");
    if ((o.sequence || o.attention || o.moeLoad || o.moeImpl) && o.hfConfig.empty())
        return usage("--seq, --attention and --moe-load apply to --hf-config imports");
    if ((o.seqFrom || o.seqTo || o.seqStep) && o.command != "fit-map")
        return usage("--seq-from, --seq-to and --seq-step apply to fit-map");
    if (o.command == "fit-map" && o.sequence)
        return usage("fit-map takes the sequence lengths as --seq-from A --seq-to B, not --seq");
    if (o.command == "fit-map" && !o.config.replaySequences.empty())
        return usage("--replay-seqs does not apply to fit-map: each of its rows is one fixed length");
    if (o.command == "fit-map" && !o.gpu)
        return usage("fit-map needs --gpu (a catalogue id or a capacity such as 24GiB)");
    if ((o.onnxLoss || o.onnxAllowOpaque) && o.onnxFile.empty())
        return usage("--onnx-loss and --onnx-allow-opaque apply to --onnx imports");
    if (!o.measuredFile.empty() && o.command != "estimate" && o.command != "report")
        return usage("--measured applies to estimate and report");
    if (o.command == "check-fit" && !o.gpu)
        return usage("check-fit needs --gpu (a catalogue id or a capacity such as 24GiB)");
    return {};
}

/// The --measured file, with notes when it was measured under another optimizer or torch. Non-zero: the exit
/// code (the message written).
int loadMeasured(const CliOptions& o, const CliIo& io, std::optional<Measurement>& measured) {
    if (o.measuredFile.empty()) return kOk;
    auto m = loadMeasurementFile(o.measuredFile);
    if (!m) return fail(io.err, kBadInput, m.error().message);
    if (!m->optimizer.empty() && m->optimizer != optimizerName(o.config.optimizer))
        io.err << "batchfit-cli: note: " << o.measuredFile << " was measured with " << m->optimizer
               << ", the estimate uses " << optimizerName(o.config.optimizer) << " (see --optimizer)\n";
    // Autograd formulas differ between torch 1.13 and 2.x: compare with the rules of the torch measured.
    const bool measuredOld = m->torchVersion.rfind("1.", 0) == 0;
    if (!m->torchVersion.empty() && measuredOld != (o.config.torch == TorchRules::Torch113))
        io.err << "batchfit-cli: note: " << o.measuredFile << " was measured with torch " << m->torchVersion
               << ", the estimate follows torch " << torchRulesName(o.config.torch)
               << "'s rules (see --torch)\n";
    measured = std::move(*m);
    return kOk;
}

/// The options, over the --model file's training section when it has one; `fileModel` gets that file's model.
/// Non-zero: the exit code (the message written).
int loadOptions(const std::vector<std::string>& args, const CliIo& io, CliOptions& o,
                std::optional<Model>& fileModel) {
    auto parsed = parseCliOptions(args);
    if (!parsed) return fail(io.err, kUsage, parsed.error().message);
    o = *parsed;
    if (!o.modelFile.empty() && !o.help && !o.version) {
        // A model saved with its training set-up (format version 2): the set-up is the default, options
        // override.
        auto doc = loadModelDocument(o.modelFile);
        if (!doc) return fail(io.err, kBadInput, doc.error().message);
        // An unknown GPU id: the GUI opens the file on the default GPU with a warning; a script must not get
        // a verdict for a GPU it did not ask for, so without --gpu that is an error here.
        const bool gpuGiven = std::find(args.begin(), args.end(), "--gpu") != args.end();
        for (const std::string& w : doc->warnings) {
            if (!gpuGiven)
                return fail(io.err, kBadInput,
                            w.substr(0, w.find("; showing")) + " (give --gpu to choose one)");
            io.err << "batchfit-cli: warning: " << w << "\n";
        }
        if (doc->setup) {
            CliOptions base;
            auto gpu = setupGpu(*doc->setup);
            if (!gpu) return fail(io.err, kBadInput, o.modelFile + ": " + gpu.error().message);
            base.gpu = *gpu;
            base.batch = doc->setup->batch;
            base.config = doc->setup->config;
            base.serving = doc->setup->serving;
            auto again = parseCliOptions(args, base);
            if (!again) return fail(io.err, kUsage, again.error().message);
            o = *again;
        }
        fileModel = std::move(doc->model);
    }
    return kOk;
}

/// check-fit's one line: "ResNet-50, batch 64 on NVIDIA GeForce RTX 4090: fits: 6.75 of 22.79 GiB usable
/// (30%); largest batch 268".
int checkFitLine(const Model& model, const Estimator& est, const Estimate& e, const CliOptions& o,
                 const CliIo& io) {
    const Verdict v = *est.verdict(o.batch, o.gpu->memoryBytes);
    const MaxBatch m = est.maxBatch(o.gpu->memoryBytes);
    io.out << model.name << ", batch " << o.batch << " on " << o.gpu->name << ": "
           << verdictSentence(v, e.requiredBytes) << "; largest batch that fits "
           << (m.largest > 0 ? std::to_string(m.largest) + (m.capped ? "+" : "") : std::string("none"))
           << "\n";
    return v.fits ? kOk : kNoFit;
}

/// check, max-batch, sweep, estimate and check-fit: the commands that run the estimator on `model`.
int estimatorCommand(const CliOptions& o, const Model& model, const std::optional<Measurement>& measured,
                     const CliIo& io) {
    auto est =
        o.gpu ? Estimator::create(model, o.config, *o.gpu) : Estimator::create(model, o.config, 536870912);
    if (!est)
        return fail(io.err, kBadInput, (o.modelFile.empty() ? "" : o.modelFile + ": ") + est.error().message);

    if (o.command == "check") {
        auto e = est->estimate(1);
        if (!e) return fail(io.err, kBadInput, e.error().message);
        if (o.json) {
            ReportInput in{&model, &o.config, o.gpu, &*e, std::nullopt, std::nullopt, 0};
            io.out << estimateJson(in);
        } else {
            io.out << model.name << ": OK (" << e->layers.size() - 1 << " layers, " << e->parameterCount
                   << " parameters, input " << shapeToString(model.inputShape) << " "
                   << dtypeName(model.inputDtype) << ")\n";
        }
        return kOk;
    }
    if (o.command == "max-batch") {
        if (!o.gpu) return fail(io.err, kUsage, "max-batch needs --gpu");
        const MaxBatch m = est->maxBatch(o.gpu->memoryBytes);
        if (o.json) {
            io.out << maxBatchJson(model, o.config, *o.gpu, m, est->usableBytes(o.gpu->memoryBytes));
        } else if (m.largest == 0) { // not even batch 1: what it needs, not the 0 B of no batch
            const auto one = est->requiredBytes(1);
            io.out << model.name << " on " << o.gpu->name << ": not even batch 1 fits, it needs "
                   << (one ? formatBytes(*one) : std::string("more than can be counted")) << " of "
                   << formatBytes(est->usableBytes(o.gpu->memoryBytes)) << " usable\n";
        } else
            io.out << model.name << " on " << o.gpu->name << ": largest batch " << m.largest
                   << (m.capped ? "+" : "")
                   << (m.largestMultipleOf8 > 0
                           ? " (largest multiple of 8: " + std::to_string(m.largestMultipleOf8) + ")"
                           : std::string())
                   << ", needs " << formatBytes(m.requiredAtLargest) << " of "
                   << formatBytes(est->usableBytes(o.gpu->memoryBytes)) << " usable\n";
        return m.largest > 0 ? kOk : kNoFit;
    }
    if (o.command == "sweep") {
        std::optional<std::uint64_t> capacity;
        if (o.gpu) capacity = o.gpu->memoryBytes;
        auto pts = est->sweep(o.from, o.to, o.step, o.logScale, capacity);
        if (!pts) return fail(io.err, kUsage, pts.error().message);
        std::optional<std::uint64_t> usable;
        if (o.gpu) usable = est->usableBytes(o.gpu->memoryBytes);
        io.out << (o.json ? sweepJson(model, o.config, *pts, usable) : sweepText(*pts, usable));
        return kOk;
    }
    auto e = est->estimate(o.batch, o.timeline);
    if (!e) return fail(io.err, kBadInput, e.error().message);
    if (o.command == "check-fit" && !o.json) return checkFitLine(model, *est, *e, o, io);
    if (!o.traceOut.empty())
        if (auto st = writeStepTrace(o, *est); !st) return fail(io.err, kBadInput, st.error().message);
    if (!o.saveFile.empty()) {
        std::optional<TrainingSetup> setup;
        if (o.gpu) setup = makeTrainingSetup(*o.gpu, o.batch, o.config);
        if (auto st = saveModelDocument(model, setup, o.saveFile); !st)
            return fail(io.err, kBadInput, st.error().message);
    }
    std::optional<Verdict> v;
    std::optional<MaxBatch> m;
    if (o.gpu) {
        v = *est->verdict(o.batch, o.gpu->memoryBytes);
        m = est->maxBatch(o.gpu->memoryBytes);
    }
    std::vector<MeasurementComparison> comparisons;
    if (measured) {
        auto cmp = compareMeasurement(*est, *measured);
        if (!cmp) return fail(io.err, kBadInput, o.measuredFile + ": " + cmp.error().message);
        comparisons = std::move(*cmp);
    }
    if (o.json) {
        const ReportInput in{&model, &o.config, o.gpu, &*e, v, m, o.top, measured ? &comparisons : nullptr};
        io.out << estimateJson(in);
    } else {
        io.out << estimateText(model, o.config, *e, o.gpu, v, m, o.top);
        if (measured) io.out << measuredText(o.measuredFile, *measured, comparisons);
    }
    return v && !v->fits ? kNoFit : kOk;
}

int runCommand(const std::vector<std::string>& args, const CliIo& io, const CliReportHooks& hooks) {
    CliOptions o;
    std::optional<Model> fileModel;
    if (const int rc = loadOptions(args, io, o, fileModel); rc != kOk) return rc;
    if (o.version) {
        io.out << "batchfit-cli " << BATCHFIT_VERSION << "\n";
        return kOk;
    }
    if (o.help || o.command.empty()) {
        io.out << cliHelp();
        return o.help ? kOk : kUsage;
    }
    if (o.command == "presets") return listPresets(o, io);
    if (o.command == "allocator-replay") {
        if (o.trace.empty())
            return fail(io.err, kUsage, "allocator-replay needs a trace file: allocator-replay TRACE");
        bool oom = false;
        auto out = allocatorReplayOutput(o, oom);
        if (!out) return fail(io.err, kBadInput, out.error().message);
        io.out << *out;
        return oom ? kNoFit : kOk;
    }
    if (!o.trace.empty() || o.capacity || o.memoryFraction)
        return fail(io.err, kUsage,
                    "a trace file, --capacity and --memory-fraction apply to allocator-replay");
    if (!o.traceOut.empty() && o.command != "estimate")
        return fail(io.err, kUsage, "--trace-out applies to estimate");
    if (!o.saveFile.empty() && o.command != "estimate")
        return fail(io.err, kUsage, "--save applies to estimate");
    if (o.command == "gpus" && !o.fit) return listGpus(o, io);
    if (o.command == "serve") return cliServe(o, io, hooks.serving);
    if (o.command != "estimate" && o.command != "max-batch" && o.command != "sweep" && o.command != "check" &&
        o.command != "report" && o.command != "gpus" && o.command != "fit-map" && o.command != "check-fit")
        return fail(io.err, kUsage, "unknown command '" + o.command + "' (see --help)");
    if (o.command == "report" && !hooks.report)
        return fail(io.err, kReportFailed,
                    "this batchfit-cli was built without Qt: reports need the desktop build");

    if (const std::string u = usageError(o); !u.empty()) return fail(io.err, kUsage, u);
    auto model = loadModel(o, std::move(fileModel));
    if (!model) return fail(io.err, kBadInput, model.error().message);
    std::optional<Measurement> measured;
    if (const int rc = loadMeasured(o, io, measured); rc != kOk) return rc;
    if (o.command == "report") return hooks.report(o, *model, measured, io);
    if (o.command == "gpus") return listGpuFits(o, *model, io);
    if (o.command == "fit-map") return fitMap(o, *model, io);
    return estimatorCommand(o, *model, measured, io);
}

} // namespace

int batchfit::runCli(const std::vector<std::string>& args, const CliIo& io, const CliReportHooks& hooks) {
    // check-fit is the CI guard: 0 fits, 1 does not, 2 for anything else (a usage error or bad input).
    const int rc = runCommand(args, io, hooks);
    const auto parsed = parseCliOptions(args);
    return parsed && parsed->command == "check-fit" && rc > kNoFit ? kUsage : rc;
}
