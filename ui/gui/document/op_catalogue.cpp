#include "gui/document/op_catalogue.h"

#include <QHash>
#include <vector>

namespace batchfit {

namespace {

struct OpEntry {
    const char* op;
    const char* keys; ///< space-separated; required ones first
};

/// The family each op is listed under in Add Layer (ops not named here are "Other").
const QHash<QString, OpCatalogue::Family>& families() {
    using F = OpCatalogue::Family;
    static const QHash<QString, F> map = {
        {QStringLiteral("linear"), F::Linear},
        {QStringLiteral("matmul"), F::Linear},
        {QStringLiteral("conv1d"), F::Convolution},
        {QStringLiteral("conv2d"), F::Convolution},
        {QStringLiteral("conv3d"), F::Convolution},
        {QStringLiteral("conv_transpose2d"), F::Convolution},
        {QStringLiteral("batchnorm1d"), F::Normalization},
        {QStringLiteral("batchnorm2d"), F::Normalization},
        {QStringLiteral("layernorm"), F::Normalization},
        {QStringLiteral("groupnorm"), F::Normalization},
        {QStringLiteral("rmsnorm"), F::Normalization},
        {QStringLiteral("embedding"), F::Embedding},
        {QStringLiteral("class_token"), F::Embedding},
        {QStringLiteral("learned_add"), F::Embedding},
        {QStringLiteral("attention"), F::Attention},
        {QStringLiteral("scaled_dot_product_attention"), F::Attention},
        {QStringLiteral("relu"), F::Activation},
        {QStringLiteral("relu6"), F::Activation},
        {QStringLiteral("hardswish"), F::Activation},
        {QStringLiteral("silu"), F::Activation},
        {QStringLiteral("leaky_relu"), F::Activation},
        {QStringLiteral("gelu"), F::Activation},
        {QStringLiteral("sigmoid"), F::Activation},
        {QStringLiteral("tanh"), F::Activation},
        {QStringLiteral("softmax"), F::Activation},
        {QStringLiteral("log_softmax"), F::Activation},
        {QStringLiteral("dropout"), F::Activation},
        {QStringLiteral("maxpool2d"), F::Pooling},
        {QStringLiteral("avgpool2d"), F::Pooling},
        {QStringLiteral("adaptive_avgpool2d"), F::Pooling},
        {QStringLiteral("flatten"), F::Shape},
        {QStringLiteral("reshape"), F::Shape},
        {QStringLiteral("transpose"), F::Shape},
        {QStringLiteral("permute"), F::Shape},
        {QStringLiteral("select"), F::Shape},
        {QStringLiteral("slice"), F::Shape},
        {QStringLiteral("contiguous"), F::Shape},
        {QStringLiteral("cast"), F::Shape},
        {QStringLiteral("identity"), F::Shape},
        {QStringLiteral("concat"), F::Shape},
        {QStringLiteral("add"), F::Arithmetic},
        {QStringLiteral("mul"), F::Arithmetic},
        {QStringLiteral("scale"), F::Arithmetic},
        {QStringLiteral("pow"), F::Arithmetic},
        {QStringLiteral("rsqrt"), F::Arithmetic},
        {QStringLiteral("sqrt"), F::Arithmetic},
        {QStringLiteral("exp"), F::Arithmetic},
        {QStringLiteral("log"), F::Arithmetic},
        {QStringLiteral("clamp"), F::Arithmetic},
        {QStringLiteral("abs"), F::Arithmetic},
        {QStringLiteral("neg"), F::Arithmetic},
        {QStringLiteral("reciprocal"), F::Arithmetic},
        {QStringLiteral("sin"), F::Arithmetic},
        {QStringLiteral("cos"), F::Arithmetic},
        {QStringLiteral("mean"), F::Arithmetic},
        {QStringLiteral("sum"), F::Arithmetic},
        {QStringLiteral("compare"), F::Arithmetic},
        {QStringLiteral("masked_fill"), F::Arithmetic},
        {QStringLiteral("learned_mul"), F::Arithmetic},
        {QStringLiteral("cross_entropy"), F::Loss},
        {QStringLiteral("mse_loss"), F::Loss},
    };
    return map;
}

const std::vector<OpEntry>& entries() {
    static const std::vector<OpEntry> list = {
        {"linear", "out_features bias tied_to"},
        {"conv1d", "out_channels kernel stride padding dilation groups bias"},
        {"conv2d", "out_channels kernel stride padding dilation groups bias"},
        {"conv3d", "out_channels kernel stride padding dilation groups bias"},
        {"conv_transpose2d", "out_channels kernel stride padding output_padding dilation groups bias"},
        {"batchnorm1d", "eps affine track_running_stats"},
        {"batchnorm2d", "eps affine track_running_stats"},
        {"layernorm", "normalized_dims elementwise_affine bias eps"},
        {"groupnorm", "groups affine eps"},
        {"rmsnorm", "eps elementwise_affine impl"},
        {"embedding", "num_embeddings embedding_dim indices tied_to"},
        {"relu", "inplace"},
        {"relu6", "inplace"},
        {"hardswish", "inplace"},
        {"silu", "inplace"},
        {"leaky_relu", "negative_slope inplace"},
        {"gelu", "approximate"},
        {"sigmoid", ""},
        {"tanh", ""},
        {"softmax", "dim"},
        {"log_softmax", "dim"},
        {"dropout", "p"},
        {"maxpool2d", "kernel stride padding dilation ceil_mode"},
        {"avgpool2d", "kernel stride padding ceil_mode count_include_pad"},
        {"adaptive_avgpool2d", "output_size"},
        {"flatten", "start_dim end_dim"},
        {"reshape", "shape"},
        {"transpose", "dim0 dim1"},
        {"permute", "dims"},
        {"select", "dim index"},
        {"slice", "dim start end step"},
        {"contiguous", ""},
        {"cast", "dtype"},
        {"identity", ""},
        {"add", ""},
        {"mul", ""},
        {"scale", "factor"},
        {"concat", "dim"},
        {"pow", "exponent"},
        {"rsqrt", ""},
        {"sqrt", ""},
        {"exp", ""},
        {"log", ""},
        {"clamp", "min max"},
        {"abs", ""},
        {"neg", ""},
        {"reciprocal", ""},
        {"sin", ""},
        {"cos", ""},
        {"mean", "dims keepdim"},
        {"sum", "dims keepdim"},
        {"compare", ""},
        {"masked_fill", "mask_shape mask buffer_shape buffer_dtype value"},
        {"learned_mul", "shape"},
        {"matmul", ""},
        {"attention",
         "heads kv_heads head_dim qkv bias out_bias dropout causal mask max_positions rope impl"},
        {"scaled_dot_product_attention", "impl causal dropout mask_shape"},
        {"class_token", ""},
        {"learned_add", ""},
        {"cross_entropy", "label_smoothing"},
        {"mse_loss", ""},
        {"opaque", "params saved_bytes_per_sample output_shape saved_bytes_constant output_dtype"},
    };
    return list;
}

const OpEntry* findEntry(const QString& op) {
    for (const auto& e : entries())
        if (op == QLatin1String(e.op)) return &e;
    return nullptr;
}

} // namespace

QStringList OpCatalogue::ops() {
    QStringList out;
    for (const auto& e : entries()) out << QString::fromLatin1(e.op);
    return out;
}

OpCatalogue::Family OpCatalogue::family(const QString& op) {
    return families().value(op, Family::Other);
}

QString OpCatalogue::familyName(Family f) {
    switch (f) {
    case Family::Linear:
        return tr("Linear and matmul");
    case Family::Convolution:
        return tr("Convolution");
    case Family::Normalization:
        return tr("Normalization");
    case Family::Embedding:
        return tr("Embedding and tokens");
    case Family::Attention:
        return tr("Attention");
    case Family::Activation:
        return tr("Activation and dropout");
    case Family::Pooling:
        return tr("Pooling");
    case Family::Shape:
        return tr("Shape and layout");
    case Family::Arithmetic:
        return tr("Arithmetic");
    case Family::Loss:
        return tr("Loss");
    case Family::Other:
        break;
    }
    return tr("Other");
}

QStringList OpCatalogue::attributeKeys(const QString& op) {
    const OpEntry* e = findEntry(op);
    if (!e) return {};
    return QString::fromLatin1(e->keys).split(QLatin1Char(' '), Qt::SkipEmptyParts);
}

Attributes OpCatalogue::starterAttributes(const QString& op) {
    Attributes a;
    using V = std::vector<std::int64_t>;
    if (op == QLatin1String("linear"))
        a.set("out_features", std::int64_t{256});
    else if (op.startsWith(QLatin1String("conv"))) {
        a.set("out_channels", std::int64_t{64});
        a.set("kernel", std::int64_t{3});
        a.set("padding", std::int64_t{1});
    } else if (op == QLatin1String("groupnorm"))
        a.set("groups", std::int64_t{32});
    else if (op == QLatin1String("embedding")) {
        a.set("num_embeddings", std::int64_t{32000});
        a.set("embedding_dim", std::int64_t{512});
    } else if (op == QLatin1String("maxpool2d") || op == QLatin1String("avgpool2d"))
        a.set("kernel", std::int64_t{2});
    else if (op == QLatin1String("adaptive_avgpool2d"))
        a.set("output_size", std::int64_t{1});
    else if (op == QLatin1String("reshape"))
        a.set("shape", V{-1});
    else if (op == QLatin1String("cast"))
        a.set("dtype", std::string("float32"));
    else if (op == QLatin1String("transpose")) {
        a.set("dim0", std::int64_t{0});
        a.set("dim1", std::int64_t{1});
    } else if (op == QLatin1String("permute"))
        a.set("dims", V{0});
    else if (op == QLatin1String("select")) {
        a.set("dim", std::int64_t{0});
        a.set("index", std::int64_t{0});
    } else if (op == QLatin1String("slice"))
        a.set("dim", std::int64_t{0});
    else if (op == QLatin1String("pow"))
        a.set("exponent", 2.0);
    else if (op == QLatin1String("clamp"))
        a.set("min", 0.0);
    else if (op == QLatin1String("masked_fill"))
        a.set("mask_shape", V{1});
    else if (op == QLatin1String("scale"))
        a.set("factor", 1.0);
    else if (op == QLatin1String("attention"))
        a.set("heads", std::int64_t{8});
    else if (op == QLatin1String("opaque")) {
        a.set("params", std::int64_t{0});
        a.set("saved_bytes_per_sample", std::int64_t{0});
        a.set("output_shape", V{1});
    }
    return a;
}

QString OpCatalogue::description(const QString& op) {
    static const QHash<QString, const char*> text = {
        {QStringLiteral("linear"),
         QT_TR_NOOP("Fully connected layer: y = x·Wᵀ + b over the last dimension.")},
        {QStringLiteral("conv1d"), QT_TR_NOOP("1-D convolution over [C, L].")},
        {QStringLiteral("conv2d"), QT_TR_NOOP("2-D convolution over [C, H, W].")},
        {QStringLiteral("conv3d"), QT_TR_NOOP("3-D convolution over [C, D, H, W].")},
        {QStringLiteral("conv_transpose2d"), QT_TR_NOOP("Transposed 2-D convolution (upsampling).")},
        {QStringLiteral("batchnorm1d"), QT_TR_NOOP("Batch normalisation over [C] or [C, L].")},
        {QStringLiteral("batchnorm2d"), QT_TR_NOOP("Batch normalisation over [C, H, W].")},
        {QStringLiteral("layernorm"), QT_TR_NOOP("Layer normalisation over the trailing dimensions.")},
        {QStringLiteral("groupnorm"), QT_TR_NOOP("Group normalisation: channels split into groups.")},
        {QStringLiteral("rmsnorm"), QT_TR_NOOP("RMS normalisation (Llama style).")},
        {QStringLiteral("embedding"), QT_TR_NOOP("Looks up a vector per token id.")},
        {QStringLiteral("relu"), QT_TR_NOOP("ReLU activation.")},
        {QStringLiteral("relu6"), QT_TR_NOOP("ReLU clipped at 6.")},
        {QStringLiteral("hardswish"), QT_TR_NOOP("Hard-swish activation (MobileNetV3).")},
        {QStringLiteral("silu"), QT_TR_NOOP("SiLU (swish) activation.")},
        {QStringLiteral("leaky_relu"), QT_TR_NOOP("Leaky ReLU activation.")},
        {QStringLiteral("gelu"), QT_TR_NOOP("GELU activation.")},
        {QStringLiteral("sigmoid"), QT_TR_NOOP("Sigmoid activation.")},
        {QStringLiteral("tanh"), QT_TR_NOOP("Tanh activation.")},
        {QStringLiteral("softmax"), QT_TR_NOOP("Softmax along a dimension.")},
        {QStringLiteral("log_softmax"), QT_TR_NOOP("Log-softmax along a dimension.")},
        {QStringLiteral("dropout"), QT_TR_NOOP("Dropout: saves a mask for the backward pass.")},
        {QStringLiteral("maxpool2d"), QT_TR_NOOP("2-D max pooling.")},
        {QStringLiteral("avgpool2d"), QT_TR_NOOP("2-D average pooling.")},
        {QStringLiteral("adaptive_avgpool2d"), QT_TR_NOOP("Average pooling to a fixed output size.")},
        {QStringLiteral("flatten"), QT_TR_NOOP("Flattens dimensions into one (a view, no copy).")},
        {QStringLiteral("reshape"), QT_TR_NOOP("Reshapes the per-sample tensor (a view).")},
        {QStringLiteral("transpose"), QT_TR_NOOP("Swaps two dimensions (a view).")},
        {QStringLiteral("permute"), QT_TR_NOOP("Reorders dimensions (a view).")},
        {QStringLiteral("select"), QT_TR_NOOP("Picks one index along a dimension (a view).")},
        {QStringLiteral("slice"), QT_TR_NOOP("Takes a range along a dimension (a view).")},
        {QStringLiteral("contiguous"), QT_TR_NOOP("Copies a view into contiguous memory.")},
        {QStringLiteral("cast"),
         QT_TR_NOOP(
             "Converts to another dtype (x.float(), x.to(torch.bfloat16), x.type_as(y)): a new tensor, "
             "nothing saved.")},
        {QStringLiteral("identity"), QT_TR_NOOP("Passes the tensor through unchanged.")},
        {QStringLiteral("add"), QT_TR_NOOP("Adds two inputs (broadcasting).")},
        {QStringLiteral("mul"), QT_TR_NOOP("Multiplies two inputs (broadcasting).")},
        {QStringLiteral("scale"), QT_TR_NOOP("Multiplies by a constant factor.")},
        {QStringLiteral("concat"), QT_TR_NOOP("Concatenates inputs along a dimension.")},
        {QStringLiteral("pow"), QT_TR_NOOP("x to a constant power; keeps x for backward.")},
        {QStringLiteral("rsqrt"), QT_TR_NOOP("1/√x elementwise; keeps its result.")},
        {QStringLiteral("sqrt"), QT_TR_NOOP("√x elementwise; keeps its result.")},
        {QStringLiteral("exp"), QT_TR_NOOP("eˣ elementwise; keeps its result.")},
        {QStringLiteral("log"), QT_TR_NOOP("Natural logarithm; keeps x.")},
        {QStringLiteral("clamp"), QT_TR_NOOP("Clamps to [min, max]; keeps x.")},
        {QStringLiteral("abs"), QT_TR_NOOP("Absolute value; keeps x.")},
        {QStringLiteral("neg"), QT_TR_NOOP("−x; keeps nothing.")},
        {QStringLiteral("reciprocal"), QT_TR_NOOP("1/x elementwise; keeps its result.")},
        {QStringLiteral("sin"), QT_TR_NOOP("Sine; keeps x.")},
        {QStringLiteral("cos"), QT_TR_NOOP("Cosine; keeps x.")},
        {QStringLiteral("mean"), QT_TR_NOOP("Mean over dims (torch 2.x keeps nothing, 1.13 keeps x).")},
        {QStringLiteral("sum"), QT_TR_NOOP("Sum over dims; keeps nothing.")},
        {QStringLiteral("compare"), QT_TR_NOOP("A comparison (x > 0, x == y): a bool mask, no gradient.")},
        {QStringLiteral("masked_fill"),
         QT_TR_NOOP("Fills where a mask is set (masked_fill, torch.where); keeps the mask.")},
        {QStringLiteral("learned_mul"),
         QT_TR_NOOP("Multiplies by a learned tensor, e.g. RMSNorm's weight or a layer scale.")},
        {QStringLiteral("matmul"), QT_TR_NOOP("Matrix product of two inputs.")},
        {QStringLiteral("attention"), QT_TR_NOOP("Multi-head self-attention, projections included.")},
        {QStringLiteral("scaled_dot_product_attention"),
         QT_TR_NOOP("F.scaled_dot_product_attention on q, k, v [heads, seq, dim]: flash or memory-efficient "
                    "kernels keep q, k, v, the output and a log-sum-exp, never the seq×seq scores.")},
        {QStringLiteral("class_token"), QT_TR_NOOP("Prepends a learned class token (ViT).")},
        {QStringLiteral("learned_add"), QT_TR_NOOP("Adds a learned tensor, e.g. a position embedding.")},
        {QStringLiteral("cross_entropy"), QT_TR_NOOP("Cross-entropy loss over class logits.")},
        {QStringLiteral("mse_loss"), QT_TR_NOOP("Mean squared error loss.")},
        {QStringLiteral("opaque"),
         QT_TR_NOOP("A layer measured elsewhere: parameters and saved bytes given directly.")},
    };
    auto it = text.find(op);
    return it == text.end() ? QString() : tr(it.value());
}

} // namespace batchfit
