#include "batchfit/presets.h"

#include "batchfit/model_io.h"

#include <string_view>

namespace batchfit {

std::string_view embeddedResource(std::string_view name);

namespace {

const std::vector<PresetInfo>& presets() {
    static const std::vector<PresetInfo> list = {
        {"resnet50", "ResNet-50 (torchvision, 224×224)"},
        {"transformer-12", "Transformer-12 (BERT-base encoder, seq 128)"},
        {"gpt2-small", "GPT-2 small (124M, seq 1024)"},
        {"vgg16", "VGG-16 (torchvision, 224×224)"},
        {"mobilenet_v2", "MobileNetV2 (torchvision, 224×224)"},
        {"vit_b_16", "ViT-B/16 (torchvision, 224×224)"},
        {"llama-2-7b", "Llama-2-7B (seq 4096, flash attention)"},
    };
    return list;
}

} // namespace

std::vector<PresetInfo> presetList() {
    return presets();
}

Result<std::string> presetJson(const std::string& id) {
    for (const auto& p : presets())
        if (p.id == id) {
            auto text = embeddedResource(id + ".json");
            if (text.empty()) return makeError("preset '" + id + "' is missing from this build");
            return std::string(text);
        }
    std::string known;
    for (const auto& p : presets()) known += (known.empty() ? "" : ", ") + p.id;
    return makeError("unknown preset '" + id + "' (known: " + known + ")");
}

Result<Model> loadPreset(const std::string& id) {
    auto text = presetJson(id);
    if (!text) return text.error();
    return parseModel(*text, "preset:" + id);
}

} // namespace batchfit
