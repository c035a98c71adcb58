#include "batchfit/hf_cache.h"
#include "batchfit/hf_import.h"
#include "test_util.h"

#include <filesystem>
#include <fstream>
#include <string_view>
#include <unistd.h>

using namespace batchfit;
using namespace batchfit::test;

namespace {

Model hf(const std::string& file, const HfImportOptions& o = {}) {
    auto m = importHfConfigFile(std::string(BATCHFIT_TEST_DATA) + "/hf/" + file, o);
    if (!m) FAIL(m.error().message);
    return *m;
}

} // namespace

TEST_CASE("Hugging Face configs give the published parameter counts", "[hf]") {
    const std::pair<const char*, std::uint64_t> published[] = {
        {"gpt2.json", 124439808ull},
        {"llama-2-7b.json", 6738415616ull},
        {"mistral-7b.json", 7241732096ull},
        {"llama-3-8b.json", 8030261248ull},
        {"qwen2-0.5b.json", 494032768ull},
        {"gemma-2b.json", 2506172416ull},
        {"phi-3-mini-4k.json", 3821079552ull},
        {"pythia-160m.json", 162322944ull},
        {"bert-base-uncased.json", 109514298ull},
        {"bert-base-classifier.json", 109483778ull},
        // Hugging Face Hub API "safetensors": {"total": ...} of each repository (a tied lm_head counts once,
        // as in model.parameters()); configs from the repositories' config.json (tests/data/hf/README.md says
        // where each copy came from)
        {"qwen3-8b.json", 8190735360ull},     // Qwen/Qwen3-8B: safetensors total 8,190,735,360 (card: 8.2B)
        {"qwen3-0.6b.json", 596049920ull},    // Qwen/Qwen3-0.6B, tied: card "0.6B, 0.44B non-embedding"
        {"gemma-2-2b.json", 2614341888ull},   // google/gemma-2-2b: safetensors total 2,614,341,888
        {"gemma-3-1b-it.json", 999885952ull}, // google/gemma-3-1b-it (= -pt): safetensors total 999,885,952
        {"phi-4.json", 14659507200ull}, // microsoft/phi-4 (phi3): GGUF general.parameter_count 14,659,507,200
        {"mixtral-8x7b.json", 46702792704ull},      // mistralai/Mixtral-8x7B-v0.1: 46,702,792,704
        {"qwen1.5-moe-a2.7b.json", 14315784192ull}, // Qwen/Qwen1.5-MoE-A2.7B: 14,315,784,192 (card: 14.3B)
        {"qwen3-30b-a3b.json", 30532122624ull},     // Qwen/Qwen3-30B-A3B: 30,532,122,624 (card: 30.5B)
    };
    for (const auto& [file, params] : published) {
        INFO(file);
        HfImportOptions o;
        o.sequenceLength = 256;
        CHECK(estimator(hf(file, o)).parameterCount() == params);
    }
}

TEST_CASE("a ViT config imports as ViTForImageClassification: an image in, num_labels out", "[hf]") {
    const Model vit = hf("vit-base-patch16-224.json");
    CHECK(vit.inputShape == Shape{3, 224, 224});
    CHECK(vit.inputDtype == DType::Float32);
    // google/vit-base-patch16-224: 86,567,656 parameters (model.num_parameters(); 197 positions, 1,000
    // classes)
    CHECK(estimator(vit).parameterCount() == 86567656ull);
    CHECK(vit.description.find("image 224x224") != std::string::npos);
    HfImportOptions seq;
    seq.sequenceLength = 256;
    auto refused = importHfConfigFile(std::string(BATCHFIT_TEST_DATA) + "/hf/vit-base-patch16-224.json", seq);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find("not a sequence length") != std::string::npos);
    auto odd = importHfConfig(
        R"({"model_type": "vit", "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4,
            "image_size": 30, "patch_size": 16})",
        "config.json");
    REQUIRE_FALSE(odd);
    CHECK(odd.error().message.find("$.image_size: 30 must be a multiple of patch_size 16") !=
          std::string::npos);
}

TEST_CASE("Gemma 2 imports with eager attention: transformers has no SDPA for it", "[hf]") {
    const auto saved = [](const char* attention) {
        HfImportOptions o;
        o.sequenceLength = 1024;
        if (attention) o.attention = std::string(attention);
        return estimateAt(hf("gemma-2-2b.json", o), 1).savedActivationBytes;
    };
    const auto byDefault = saved(nullptr);
    CHECK(byDefault == saved("eager"));
    CHECK(byDefault > saved("flash"));
}

TEST_CASE("the gpt2 config is the gpt2-small preset plus what transformers 5 does differently", "[hf]") {
    // The preset is Hugging Face's eager GPT-2 as measured with torch 1.13 (the `bias` buffer mask, one fused
    // tanh GELU). The import follows the newest transformers (docs/accuracy-real.md): NewGELUActivation in
    // Python saves three more [S, 3072] tensors per block, and the causal mask is made per forward, not a
    // saved 1024 x 1024 bool buffer. Nothing else may differ.
    HfImportOptions eager;
    eager.attention.emplace("eager");
    Estimator a = estimator(hf("gpt2.json", eager));
    Estimator b = estimator(preset("gpt2-small"));
    for (std::int64_t batch : {1, 4}) {
        auto ea = a.estimate(batch), eb = b.estimate(batch);
        REQUIRE(ea);
        REQUIRE(eb);
        const std::int64_t gelu = 12 * 3 * batch * 1024 * 3072 * 4, buffers = 12 * 1024 * 1024;
        CHECK(static_cast<std::int64_t>(ea->savedActivationBytes - eb->savedActivationBytes) ==
              gelu - buffers);
        CHECK(ea->optimizerStateBytes == eb->optimizerStateBytes);
        CHECK(ea->parameterCount == eb->parameterCount);
    }
}

TEST_CASE("a BERT classifier config at sequence 128 matches the transformer-12 preset", "[hf]") {
    HfImportOptions o;
    o.sequenceLength = 128;
    o.attention = "eager"; // the preset's attention
    auto ea = estimator(hf("bert-base-classifier.json", o)).estimate(2);
    auto eb = estimator(preset("transformer-12")).estimate(2);
    REQUIRE(ea);
    REQUIRE(eb);
    CHECK(ea->savedActivationBytes == eb->savedActivationBytes);
    CHECK(ea->peakAllocatedBytes == eb->peakAllocatedBytes);
}

TEST_CASE("GQA and flash attention shape the estimate", "[hf]") {
    HfImportOptions o;
    o.sequenceLength = 4096;
    Model mistral = hf("mistral-7b.json", o);
    Model llama = hf("llama-2-7b.json", o);
    // Mistral's k/v projections are 4x smaller (8 kv heads): its attention saves less per layer than
    // Llama-2's, even though its MLP is wider.
    const auto m = estimateAt(mistral, 1);
    const auto l = estimateAt(llama, 1);
    CHECK(m.parameterCount > l.parameterCount);
    HfImportOptions eager = o;
    eager.attention = "eager";
    const auto le = estimateAt(hf("llama-2-7b.json", eager), 1);
    // Eager attention materialises 32 x 4096 x 4096 scores per layer: far more than flash.
    CHECK(le.savedActivationBytes > l.savedActivationBytes + 32ull * 32 * 4096 * 4096 * 4 / 10 * 9);
}

TEST_CASE("a GPT-2 or BERT import runs SDPA by default, as transformers >= 4.42 on torch 2 does", "[hf]") {
    // transformers picks attn_implementation="sdpa" when the model has it (BERT: PR #28802, GPT-2: PR #31172)
    // and torch >= 2.1.1; GPT-2 then passes is_causal, no S x S mask or scores are kept.
    HfImportOptions eager;
    eager.attention = "eager";
    for (const char* file : {"gpt2.json", "bert-base-classifier.json"}) {
        INFO(file);
        const auto sdpa = estimateAt(hf(file), 1), old = estimateAt(hf(file, eager), 1);
        CHECK(sdpa.parameterCount == old.parameterCount);
        // the S x S tensors are gone: at least the fp32 softmax and its dropout output, 12 layers x 12 heads
        const std::int64_t s = std::string(file) == "gpt2.json" ? 1024 : 512;
        CHECK(static_cast<std::int64_t>(old.savedActivationBytes - sdpa.savedActivationBytes) >=
              12 * 12 * s * s * 8);
    }
}

TEST_CASE("bad or unsupported configs are explained", "[hf][bad-input]") {
    auto err = [](const std::string& text) {
        auto m = importHfConfig(text, "config.json");
        REQUIRE_FALSE(m);
        return m.error().message;
    };
    CHECK(err("{").find("config.json: not valid JSON") == 0);
    CHECK(err(R"({"hidden_size": 4})").find("$.model_type: missing") != std::string::npos);
    CHECK(err(R"({"model_type": "t5"})").find("'t5' is not supported") != std::string::npos);
    CHECK(err(R"({"model_type": "llama", "hidden_size": "big"})")
              .find("$.hidden_size: expected a positive integer") != std::string::npos);
    CHECK(err(R"({"model_type": "llama", "hidden_size": 64})").find("$.num_hidden_layers: missing") !=
          std::string::npos);
    CHECK(err(R"({"model_type": "granitemoe", "num_local_experts": 32})").find("mixture of experts") !=
          std::string::npos);
    HfImportOptions tooLong;
    tooLong.sequenceLength = 5000;
    auto m = importHfConfigFile(std::string(BATCHFIT_TEST_DATA) + "/hf/llama-2-7b.json", tooLong);
    REQUIRE_FALSE(m);
    CHECK(m.error().message.find("exceeds the model's maximum 4096") != std::string::npos);
}

TEST_CASE("a cancelled Hugging Face import returns 'import cancelled'", "[hf][cancel]") {
    const std::string path = std::string(BATCHFIT_TEST_DATA) + "/hf/gpt2.json";
    // The hook is polled more than once: cancel at each poll in turn, then never.
    int polls = 0;
    HfImportOptions counting;
    counting.cancelled = [&polls] {
        ++polls;
        return false;
    };
    auto full = importHfConfigFile(path, counting);
    REQUIRE(full);
    REQUIRE(polls >= 3);
    CHECK(*full == hf("gpt2.json")); // a hook that never fires changes nothing
    for (int at = 1; at <= polls; ++at) {
        INFO("cancelled at poll " << at);
        int n = 0;
        HfImportOptions o;
        o.cancelled = [&n, at] { return ++n >= at; };
        auto m = importHfConfigFile(path, o);
        REQUIRE_FALSE(m);
        CHECK(m.error().message.find("gpt2.json: import cancelled") != std::string::npos);
    }
}

TEST_CASE("a model id finds its config.json in the local Hugging Face cache, offline", "[hf][cache]") {
    namespace fs = std::filesystem;
    const fs::path root = fs::temp_directory_path() / ("batchfit-hf-cache-" + std::to_string(::getpid()));
    fs::remove_all(root);
    const fs::path repo = root / "hub" / "models--test-org--tiny-gpt2";
    fs::create_directories(repo / "refs");
    fs::create_directories(repo / "snapshots" / "aaa111");
    fs::create_directories(repo / "snapshots" / "bbb222");
    std::ofstream(repo / "refs" / "main") << "aaa111";
    fs::copy_file(std::string(BATCHFIT_TEST_DATA) + "/hf/gpt2.json",
                  repo / "snapshots" / "aaa111" / "config.json");
    fs::copy_file(std::string(BATCHFIT_TEST_DATA) + "/hf/gpt2.json",
                  repo / "snapshots" / "bbb222" / "config.json");
    const std::string home = root.string();
    const EnvLookup env = [&home](const char* name) -> const char* {
        return std::string_view(name) == "HF_HOME" ? home.c_str() : nullptr;
    };
    CHECK(hfHubCacheDir(env) == (root / "hub").string());
    auto found = findCachedHfConfig("test-org/tiny-gpt2", env);
    REQUIRE(found);
    CHECK(*found == (repo / "snapshots" / "aaa111" / "config.json").string()); // the snapshot refs/main names
    REQUIRE(importHfConfigFile(*found));

    fs::remove(repo / "refs" / "main"); // without refs/main: a snapshot that has a config.json
    found = findCachedHfConfig("test-org/tiny-gpt2", env);
    REQUIRE(found);
    CHECK(fs::path(*found).filename() == "config.json");

    // what the cache holds, for the GUI to list: ids with a config.json, not a folder without one
    fs::create_directories(root / "hub" / "models--other--no-config" / "snapshots" / "ccc");
    fs::create_directories(root / "hub" / "datasets--x--y");
    CHECK(listCachedHfModels(env) == std::vector<std::string>{"test-org/tiny-gpt2"});

    auto missing = findCachedHfConfig("test-org/not-there", env);
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message.find("models--test-org--not-there") != std::string::npos);
    CHECK(missing.error().message.find("never downloads") != std::string::npos);
    for (const char* bad : {"../etc", "a/b/c", "/abs", "name with space", ""}) {
        INFO(bad);
        CHECK_FALSE(isHfModelId(bad));
        CHECK_FALSE(findCachedHfConfig(bad, env));
    }
    CHECK(isHfModelId("mistralai/Mistral-7B-v0.1"));
    CHECK(isHfModelId("gpt2"));
    // huggingface_hub's order: HF_HUB_CACHE, HF_HOME/hub, XDG_CACHE_HOME/huggingface/hub,
    // ~/.cache/huggingface/hub
    const EnvLookup xdg = [](const char* name) -> const char* {
        return std::string_view(name) == "XDG_CACHE_HOME" ? "/x"
               : std::string_view(name) == "HOME"         ? "/h"
                                                          : nullptr;
    };
    CHECK(hfHubCacheDir(xdg) == "/x/huggingface/hub");
    const EnvLookup onlyHome = [](const char* name) -> const char* {
        return std::string_view(name) == "HOME" ? "/h" : nullptr;
    };
    CHECK(hfHubCacheDir(onlyHome) == "/h/.cache/huggingface/hub");
    fs::remove_all(root);
}

TEST_CASE("Qwen3 and Gemma 3 norm q and k per head; Gemma 2 soft-caps its logits", "[hf]") {
    HfImportOptions o;
    o.sequenceLength = 128;
    HfImportOptions eager = o;
    eager.attention = "eager";
    const auto q = estimateAt(hf("qwen3-0.6b.json", o), 1);
    // q_norm and k_norm: 2 x 128 weights per layer
    CHECK(q.parameterCount == 596049920ull);
    // Gemma 2's final soft-capping keeps tanh's [S, vocab] result (fp32): at least 128 x 256000 x 4 bytes
    // more than the same model without it
    const std::string path = std::string(BATCHFIT_TEST_DATA) + "/hf/gemma-2-2b.json";
    std::string text = readFile(path);
    auto capped = importHfConfig(text, path, o);
    const std::string key = R"("final_logit_softcapping": 30.0)";
    text.replace(text.find(key), key.size(), R"("final_logit_softcapping": null)");
    auto plain = importHfConfig(text, path, o);
    REQUIRE(capped);
    REQUIRE(plain);
    CHECK(estimateAt(*capped, 1).savedActivationBytes >=
          estimateAt(*plain, 1).savedActivationBytes + 128ull * 256000 * 4);
    // eager attention soft-caps the scores too (tanh keeps [heads, S, S] per layer)
    auto e1 = importHfConfig(readFile(path), path, eager);
    REQUIRE(e1);
    std::string noAttnCap = readFile(path);
    const std::string ak = R"("attn_logit_softcapping": 50.0)";
    noAttnCap.replace(noAttnCap.find(ak), ak.size(), R"("attn_logit_softcapping": null)");
    auto e2 = importHfConfig(noAttnCap, path, eager);
    REQUIRE(e2);
    CHECK(estimateAt(*e1, 1).savedActivationBytes >=
          estimateAt(*e2, 1).savedActivationBytes + 26ull * 8 * 128 * 128 * 4);
}

TEST_CASE("an imported model is named from its config, its cache id or its folder, not its class",
          "[hf][name]") {
    const std::string text = readFile(std::string(BATCHFIT_TEST_DATA) + "/hf/llama-2-7b.json");
    REQUIRE(text.find("_name_or_path") == std::string::npos);
    auto name = [&](const std::string& configText, const std::string& source) {
        auto m = importHfConfig(configText, source);
        REQUIRE(m);
        return m->name;
    };
    CHECK(name(text, "/home/u/.cache/huggingface/hub/models--meta-llama--Llama-2-7b-hf/snapshots/01c7f73d/"
                     "config.json") == "meta-llama/Llama-2-7b-hf");
    CHECK(name(text, "/data/Llama-2-7b-chat/config.json") == "Llama-2-7b-chat");
    CHECK(name(text, "llama-2-7b.json") == "llama-2-7b");
    CHECK(name(text, "config.json") == "LlamaForCausalLM"); // nothing better to go by
    std::string withPath = text;
    withPath.insert(withPath.find('{') + 1, R"("_name_or_path": "/scratch/ckpt/my-llama-7b/",)");
    CHECK(name(withPath, "/data/x/config.json") == "my-llama-7b");
    std::string withId = text;
    withId.insert(withId.find('{') + 1, R"("_name_or_path": "NousResearch/Llama-2-7b-hf",)");
    CHECK(name(withId, "/data/x/config.json") == "NousResearch/Llama-2-7b-hf");
}
