#include "report/setting_labels.h"

#include "report/report_language.h"

#include <QCoreApplication>
#include <QTranslator>
#include <algorithm>
#include <iterator>
#include <string_view>

namespace batchfit {

namespace {

// Every label of the settings table, for lupdate (tests/report checks that none is missing).
const char* const kLabels[] = {
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "GPU"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Custom GPU capacity"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Micro-batch"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Optimizer"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Optimizer implementation"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "AMSGrad"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "RMSprop momentum"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "RMSprop centered"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Precision"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Checkpointing"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Checkpoint every k blocks"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Checkpoint mode"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Gradient accumulation"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "zero_grad(set_to_none)"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Optimizer offload"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Eager module loading"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "First step"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "PyTorch rules"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Frozen layers"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Layers that train"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "LoRA rank"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "LoRA alpha"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "LoRA dropout"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "DoRA"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "LoRA targets"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Quantized base weights"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Double quantization"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Compute dtype"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "prepare_model_for_kbit_training"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "GPUs"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Tensor parallelism"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Sequence parallelism"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Pipeline stages"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Pipeline micro-batches"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Data-parallel strategy"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "GPUs per node"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "ZeRO-1 implementation"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "DDP bucket size"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Gradients as bucket views"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "ZeRO reduce bucket"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "ZeRO overlap_comm"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "ZeRO-3 persistence threshold"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "FSDP all-gather rate limiter"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "FSDP backward prefetch"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "FSDP2 reshard after forward"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "CUDA context"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "cuBLAS workspace"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "cuDNN workspace cap"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Fragmentation override"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "PYTORCH_CUDA_ALLOC_CONF"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Batch lengths replayed"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Samples per epoch"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Safety margin"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Serving engine"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "vLLM version"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "GPU memory utilization"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Max model length"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Max sequences"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Max batched tokens"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "KV block size"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "KV cache dtype"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Served weights"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Quantization group"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "No CUDA graphs"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Activation peak (measured)"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Non-torch memory (measured)"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "CUDA graphs (measured)"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "KV cache memory"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Language-model loss"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Activation offload"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Recipe"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Reference log-probabilities"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Prompt tokens"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Generation"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "vLLM share of the GPU"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Steps per generation"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "GRPO iterations"),
    QT_TRANSLATE_NOOP("batchfit::SettingLabels", "Parameter offload"),
};

} // namespace

QString settingLabel(const SettingInfo& s) {
    // the report's language (a ReportLanguage scope: batchfit-cli report --lang) before the application's
    if (const QTranslator* t = ReportLanguage::currentTranslator()) {
        const QString out = t->translate("batchfit::SettingLabels", s.label.c_str());
        if (!out.isEmpty()) return out;
    }
    return QCoreApplication::translate("batchfit::SettingLabels", s.label.c_str());
}

bool isTranslatableSettingLabel(const std::string& label) {
    return std::any_of(std::begin(kLabels), std::end(kLabels),
                       [&](const char* l) { return std::string_view(l) == label; });
}

} // namespace batchfit
