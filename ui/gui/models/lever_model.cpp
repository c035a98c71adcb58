#include "gui/models/lever_model.h"

#include "gui/charts/component_style.h"
#include "gui/estimation/byte_format.h"

#include <QFont>

namespace batchfit {

LeverModel::LeverModel(QObject* parent) : QAbstractTableModel(parent) {}

void LeverModel::setLevers(std::vector<Lever> levers, bool bySavings) {
    beginResetModel();
    m_levers = std::move(levers);
    m_bySavings = bySavings;
    endResetModel();
}

const Lever* LeverModel::lever(int row) const {
    return row >= 0 && row < static_cast<int>(m_levers.size()) ? &m_levers[static_cast<std::size_t>(row)]
                                                               : nullptr;
}

QString LeverModel::title(const Lever& l) {
    if (l.id == "checkpointing") return tr("Gradient checkpointing of every block");
    if (l.id == "amp-bf16") return tr("bf16 mixed precision (autocast)");
    if (l.id == "adam8bit") return tr("8-bit Adam (bitsandbytes)");
    if (l.id == "sgd-momentum") return tr("SGD with momentum instead of Adam");
    if (l.id == "offload") return tr("Offload optimizer states to CPU");
    if (l.id == "fused") return tr("Fused optimizer (fused=True)");
    if (l.id == "param-offload")
        return tr("Offload parameter shards to host memory (ZeRO-3 offload_param / FSDP CPUOffload)");
    if (l.id == "activation-offload") return tr("Offload the checkpointed layers' inputs to host memory");
    if (l.id == "trl-fused-loss") return tr("TRL's fused LM head (SFTTrainer's loss, TRL 1.15+)");
    if (l.id == "ref-logps-precomputed") return tr("Precompute DPO's reference log-probabilities");
    if (l.id == "grpo-no-reference") return tr("GRPO without the reference (beta=0.0)");
    if (l.id == "lora-no-dora") return tr("LoRA without DoRA (use_dora=False)");
    if (l.id == "lora") return tr("LoRA r=16 on attention, bf16 weights");
    if (l.id == "qlora") return tr("QLoRA: 4-bit NF4 base weights with LoRA r=16");
    if (l.id == "freeze-backbone" && !l.config.trainOnly.empty())
        return tr("Freeze the backbone, train only %1")
            .arg(QString::fromStdString(l.config.trainOnly.front()));
    if (l.id == "accumulation")
        return tr("Smaller micro-batches with gradient accumulation (×%1)").arg(l.config.accumulationSteps);
    if (l.id == "zero2") return tr("ZeRO-2 on these GPUs");
    if (l.id == "fsdp") return tr("FSDP full shard");
    if (l.id == "zero3") return tr("DeepSpeed ZeRO-3");
    if (l.id == "tp2") return tr("Tensor parallel TP = 2");
    if (l.id == "expandable-segments") return tr("Expandable segments (PYTORCH_CUDA_ALLOC_CONF)");
    if (l.id == "more-gpus")
        return tr("%1 GPUs instead of %2").arg(l.config.parallel.gpus).arg(l.config.parallel.gpus / 2);
    return QString::fromStdString(l.title);
}

QString LeverModel::cost(const Lever& l) {
    if (l.id == "checkpointing") return tr("≈+33% compute");
    if (l.id == "amp-bf16") return tr("needs bf16 hardware (Ampere or newer)");
    if (l.id == "adam8bit") return tr("small accuracy risk");
    if (l.id == "sgd-momentum") return tr("may need retuning");
    if (l.id == "offload") return tr("slower optimizer step");
    if (l.id == "fused") return tr("none (CUDA, torch 2.0 or newer)");
    if (l.id == "activation-offload" || l.id == "param-offload")
        return tr("%1 of host memory, %2 over PCIe per step")
            .arg(ByteFormat::bytes(l.hostBytes), ByteFormat::bytes(l.transferBytes));
    if (l.id == "trl-fused-loss") return tr("train with TRL's SFTTrainer (or a fused linear cross-entropy)");
    if (l.id == "ref-logps-precomputed") return tr("one inference pass over the data set before training");
    if (l.id == "grpo-no-reference") return tr("no KL penalty in the loss");
    if (l.id == "lora-no-dora") return tr("plain LoRA adapters");
    if (l.id == "lora" || l.id == "qlora") return tr("fine-tunes adapters only");
    if (l.id == "freeze-backbone") return tr("fine-tunes the head only");
    if (l.id == "accumulation") return tr("%1 micro-steps per update").arg(l.config.accumulationSteps);
    if (l.id == "zero2") return tr("reduce-scatter instead of all-reduce");
    if (l.id == "fsdp") return tr("an all-gather per block, forward and backward");
    if (l.id == "zero3") return tr("an all-gather per layer, forward and backward");
    if (l.id == "more-gpus") return tr("twice the GPUs");
    if (l.id == "tp2") return tr("an all-reduce per layer, forward and backward");
    if (l.id == "expandable-segments") return tr("none (PyTorch 2.1 or newer)");
    return QString::fromStdString(l.cost);
}

QString LeverModel::explanation(const Lever& l) {
    if (l.id == "checkpointing")
        return tr("Keep only each block's input in the forward pass and recompute the rest during the "
                  "backward pass.");
    if (l.id == "amp-bf16")
        return tr("Run matrix multiplications in bfloat16 and save half-size activations.");
    if (l.id == "adam8bit") return tr("Store Adam's two moments in 8 bits instead of 32.");
    if (l.id == "sgd-momentum") return tr("One state tensor per parameter instead of Adam's two.");
    if (l.id == "offload") return tr("Keep optimizer states and master weights in host memory.");
    if (l.id == "param-offload")
        return tr("Each GPU's parameter and gradient shards live in host memory and the optimizer steps "
                  "there; a block's parameters are copied to the GPU and gathered only while it runs.");
    if (l.id == "activation-offload")
        return tr("Each checkpointed layer's input waits in pinned host memory instead of on the GPU "
                  "(transformers: activation_checkpointing_kwargs={\"offload\": True}); it comes back for the "
                  "layer's recomputation.");
    if (l.id == "fused")
        return tr("One kernel updates every parameter: no foreach copy of the parameters during step().");
    if (l.id == "trl-fused-loss")
        return tr("The same loss without the whole [tokens x vocabulary] logits: the head is projected and "
                  "folded in tiles, as TRL's SFTTrainer does by default.");
    if (l.id == "ref-logps-precomputed")
        return tr("precompute_ref_log_probs=True: the reference log-probabilities are computed once before "
                  "training, so no step runs the reference forward or keeps a frozen copy of the model.");
    if (l.id == "grpo-no-reference")
        return tr(
            "beta=0.0, TRL's default: no reference model is loaded, so neither its log-probabilities nor "
            "a frozen copy of the model are on the GPU.");
    if (l.id == "lora-no-dora")
        return tr("use_dora=False on the same targets: no magnitude vectors, no weight norms recomputed in "
                  "each forward, and neither the base output nor the adapter output kept for the backward.");
    if (l.id == "accumulation")
        return tr("Split each update into micro-batches; the batch column counts samples per update.");
    if (l.id == "freeze-backbone")
        return tr(
            "Every layer but the output head is frozen (requires_grad=False): no gradients or optimizer "
            "states for them, and nothing before the head is saved for the backward pass.");
    if (l.id == "lora")
        return tr("Freeze the model and train small adapters (PEFT's default targets, r=16, alpha 32, "
                  "dropout 0.05): no gradients or optimizer states for the base weights.");
    if (l.id == "zero2")
        return tr(
            "Each GPU keeps its shard of the optimizer states and gradients (DeepSpeed ZeRO stage 2); the "
            "micro-batch is per GPU.");
    if (l.id == "fsdp")
        return tr("Shard the parameters too: each block's parameters are gathered only while it runs "
                  "(FSDP FULL_SHARD).");
    if (l.id == "zero3")
        return tr(
            "DeepSpeed ZeRO stage 3: each GPU keeps its shard of the parameters, gradients and optimizer "
            "states; a layer's parameters are gathered while it runs.");
    if (l.id == "more-gpus") return tr("The same strategy on twice as many GPUs: every shard halves.");
    if (l.id == "tp2")
        return tr(
            "Megatron tensor parallelism over pairs of GPUs: each holds half of every layer's heads and "
            "MLP columns, and half of the vocabulary; half as many data-parallel replicas.");
    if (l.id == "expandable-segments")
        return tr("Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True before starting Python: the caching "
                  "allocator grows one address range per pool instead of fixed segments, so freed blocks "
                  "merge and the cache fragments less.");
    if (l.id == "qlora")
        return tr("Load the linear layers in 4 bits (bitsandbytes NF4, double quantization) and train LoRA "
                  "adapters on them: 0.52 bytes per base weight, the rest in fp32, bf16 compute and "
                  "checkpointing every block (prepare_model_for_kbit_training).");
    return {};
}

int LeverModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_levers.size());
}

int LeverModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LeverModel::data(const QModelIndex& index, int role) const {
    const Lever* l = lever(index.row());
    if (!index.isValid() || !l) return {};
    const bool better = l->maxBatch > l->baselineMaxBatch;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case TitleColumn:
            return title(*l) + QLatin1Char('\n') + tr("cost: %1").arg(cost(*l));
        case BatchColumn:
            return QString::number(l->maxBatch);
        case GainColumn:
            if (m_bySavings && l->maxBatch <= 0) // nothing fits: what it saves at batch 1
                return l->savedBytesAtOne > 0
                           ? tr("saves %1")
                                 .arg(ByteFormat::bytes(static_cast<std::uint64_t>(l->savedBytesAtOne)))
                           : tr("saves nothing");
            if (l->baselineMaxBatch <= 0) return l->maxBatch > 0 ? tr("now fits") : tr("still does not fit");
            // A ratio of the core's two answers, for reading (display only).
            return tr("×%1").arg(static_cast<double>(l->maxBatch) / static_cast<double>(l->baselineMaxBatch),
                                 0, 'f', 2);
        default:
            return {};
        }
    case Qt::ToolTipRole:
        return explanation(*l);
    case Qt::ForegroundRole:
        if (index.column() == GainColumn) return better ? ComponentStyle::fitsColor() : QVariant();
        return {};
    case Qt::TextAlignmentRole:
        if (index.column() == BatchColumn || index.column() == GainColumn)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    default:
        return {};
    }
}

QVariant LeverModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
        case TitleColumn:
            return tr("Change");
        case BatchColumn:
            return tr("Largest batch");
        case GainColumn:
            return tr("vs now");
        default:
            return {};
        }
    }
    if (role == Qt::ToolTipRole && section == BatchColumn)
        return tr("Largest batch per optimizer update (micro-batch × accumulation steps) that fits with this "
                  "change.");
    return {};
}

} // namespace batchfit
