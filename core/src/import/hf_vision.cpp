// Hugging Face vision configs -> layer stacks, following transformers' modeling code: ViT
// (models/vit/modeling_vit.py: ViTForImageClassification).
#include "import/hf_config_util.h"

namespace batchfit::hf {

/// ViTForImageClassification: the patch convolution, flatten + transpose, the [CLS] token, the learned
/// position embeddings, pre-norm encoder layers (eager attention's softmax in fp32, as every transformers 5
/// encoder here), the final LayerNorm and a linear classifier on the [CLS] token, cross-entropy over
/// `num_labels`.
Result<Model> vit(const Config& c, const HfImportOptions& o) {
    BF_TRY(d, c.integer({"hidden_size"}));
    BF_TRY(layers, c.layerCount({"num_hidden_layers"}));
    BF_TRY(heads, c.integer({"num_attention_heads"}));
    BF_TRY(inner, c.integer({"intermediate_size"}, 4 * d));
    BF_TRY(image, c.integer({"image_size"}, 224));
    BF_TRY(patch, c.integer({"patch_size"}, 16));
    BF_TRY(channels, c.integer({"num_channels"}, 3));
    if (image % patch != 0 || image / patch > 4096)
        return makeError(c.source() + ": $.image_size: " + std::to_string(image) +
                         " must be a multiple of patch_size " + std::to_string(patch) +
                         " with at most 4096 patches a side");
    if (o.sequenceLength)
        return makeError(c.source() + ": a ViT takes images of image_size " + std::to_string(image) +
                         ", not a sequence length");
    const std::int64_t patches = (image / patch) * (image / patch);
    const double eps = c.real("layer_norm_eps", 1e-12), hp = c.real("hidden_dropout_prob", 0.0);
    Model m;
    m.inputShape = {channels, image, image};
    m.inputDtype = DType::Float32;
    m.layers.push_back(block(
        "embeddings",
        {op("patch_embeddings", "conv2d", {{"out_channels", d}, {"kernel", patch}, {"stride", patch}}),
         op("flatten", "reshape", {{"shape", std::vector<std::int64_t>{d, patches}}}),
         op("transpose", "permute", {{"dims", std::vector<std::int64_t>{1, 0}}}),
         op("cls_token", "class_token"), op("position_embeddings", "learned_add"), dropout("dropout", hp)}));
    Layer att = block("attention", {op("layernorm_before", "layernorm", {{"eps", eps}}),
                                    op("attention", "attention",
                                       {{"heads", heads},
                                        {"names", std::string("query,key,value,dense")},
                                        {"bias", c.flag("qkv_bias", true)},
                                        {"dropout", c.real("attention_probs_dropout_prob", 0.0)},
                                        {"softmax_dtype", std::string("float32")},
                                        {"impl", o.attention.value_or("flash")}}),
                                    dropout("dropout", hp)});
    att.shortcut = ShortcutKind::Identity;
    Layer ffn = block("mlp", {op("layernorm_after", "layernorm", {{"eps", eps}}),
                              op("intermediate", "linear", {{"out_features", inner}}),
                              activation("act", c.str("hidden_act", "gelu")),
                              op("output", "linear", {{"out_features", d}}), dropout("dropout", hp)});
    ffn.shortcut = ShortcutKind::Identity;
    Layer layer = block("layer", {att, ffn});
    layer.repeat = layers;
    layer.keepInput = true; // ViTEncoder: `hidden_states = layer_module(hidden_states)`
    m.layers.push_back(layer);
    m.layers.push_back(op("layernorm", "layernorm", {{"eps", eps}}));
    m.layers.push_back(op("cls", "select", {{"dim", std::int64_t{0}}, {"index", std::int64_t{0}}}));
    m.layers.push_back(op("classifier", "linear", {{"out_features", numLabels(c)}}));
    m.layers.push_back(op("loss", "cross_entropy"));
    return m;
}

} // namespace batchfit::hf
