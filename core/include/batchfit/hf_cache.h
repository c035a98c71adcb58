#pragma once
// Finding a model's config.json in the local Hugging Face cache, offline (no download, ever).
#include "batchfit/result.h"

#include <functional>
#include <string>
#include <vector>

namespace batchfit {

/// Reads an environment variable (nullptr when unset); std::getenv by default, replaceable in tests.
using EnvLookup = std::function<const char*(const char*)>;

/// The hub cache folder, as huggingface_hub resolves it: $HF_HUB_CACHE, else $HF_HOME/hub, else
/// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub.
std::string hfHubCacheDir(const EnvLookup& env = {});

/// True for "ORG/NAME" or "NAME" made of letters, digits, '.', '_' and '-' (no "..").
bool isHfModelId(const std::string& id);

/// The config.json of `modelId` ("mistralai/Mistral-7B-v0.1") in the cache: the snapshot refs/main names,
/// else the newest snapshot that has one. The error says where it looked and how to get the file.
Result<std::string> findCachedHfConfig(const std::string& modelId, const EnvLookup& env = {});

/// The model ids whose config.json the cache holds ("meta-llama/Meta-Llama-3-8B", ...), sorted; at most
/// `limit` (a cache holds a few hundred at most; the GUI lists them to choose from).
std::vector<std::string> listCachedHfModels(const EnvLookup& env = {}, std::size_t limit = 2000);

} // namespace batchfit
