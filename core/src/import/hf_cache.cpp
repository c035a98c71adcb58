#include "batchfit/hf_cache.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace batchfit {

namespace fs = std::filesystem;

namespace {

const char* lookup(const EnvLookup& env, const char* name) {
    const char* v = env ? env(name) : std::getenv(name);
    return v && *v ? v : nullptr;
}

} // namespace

std::string hfHubCacheDir(const EnvLookup& env) {
    if (const char* hub = lookup(env, "HF_HUB_CACHE")) return hub;
    if (const char* home = lookup(env, "HF_HOME")) return (fs::path(home) / "hub").string();
    if (const char* xdg = lookup(env, "XDG_CACHE_HOME"))
        return (fs::path(xdg) / "huggingface" / "hub").string();
    const char* user = lookup(env, "HOME");
    return (fs::path(user ? user : ".") / ".cache" / "huggingface" / "hub").string();
}

bool isHfModelId(const std::string& id) {
    if (id.empty() || id.size() > 200 || id.find("..") != std::string::npos) return false;
    int slashes = 0;
    for (char c : id) {
        if (c == '/') {
            ++slashes;
            continue;
        }
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                        c == '.' || c == '_' || c == '-';
        if (!ok) return false;
    }
    return slashes <= 1 && id.front() != '/' && id.back() != '/';
}

Result<std::string> findCachedHfConfig(const std::string& modelId, const EnvLookup& env) {
    if (!isHfModelId(modelId))
        return makeError("'" + modelId + "' is neither a file nor a Hugging Face model id (ORG/NAME)");
    std::string folder = "models--" + modelId;
    if (const auto slash = folder.find('/'); slash != std::string::npos) folder.replace(slash, 1, "--");
    const fs::path repo = fs::path(hfHubCacheDir(env)) / folder;
    const fs::path snapshots = repo / "snapshots";
    std::error_code ec;
    // refs/main holds the commit hash of the snapshot "main" resolves to.
    std::ifstream ref(repo / "refs" / "main");
    std::string hash;
    if (ref && std::getline(ref, hash) && !hash.empty() && hash.find('/') == std::string::npos &&
        hash.find("..") == std::string::npos) {
        const fs::path config = snapshots / hash / "config.json";
        if (fs::is_regular_file(config, ec)) return config.string();
    }
    fs::path newest;
    fs::file_time_type newestTime{};
    for (fs::directory_iterator it(snapshots, ec), end; !ec && it != end; it.increment(ec)) {
        const fs::path config = it->path() / "config.json";
        if (!fs::is_regular_file(config, ec)) continue;
        const auto t = fs::last_write_time(config, ec);
        if (!ec && (newest.empty() || t > newestTime)) {
            newest = config;
            newestTime = t;
        }
    }
    if (!newest.empty()) return newest.string();
    return makeError("no config.json for '" + modelId + "' in the Hugging Face cache (" + repo.string() +
                     "); BatchFit never downloads: fetch it with 'huggingface-cli download " + modelId +
                     " config.json', or set HF_HOME / HF_HUB_CACHE to where your cache is");
}

std::vector<std::string> listCachedHfModels(const EnvLookup& env, std::size_t limit) {
    std::vector<std::string> ids;
    std::error_code ec;
    for (fs::directory_iterator it(hfHubCacheDir(env), ec), end; !ec && it != end && ids.size() < limit;
         it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.rfind("models--", 0) != 0) continue;
        std::string id = name.substr(8);
        if (const auto dash = id.find("--"); dash != std::string::npos) id.replace(dash, 2, "/");
        if (isHfModelId(id) && findCachedHfConfig(id, env)) ids.push_back(id);
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

} // namespace batchfit
