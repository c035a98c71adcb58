// The report's assumptions: what each figure rests on, in the set-up's terms (ReportSections).
#include "report/report_sections.h"
#include "report/report_text.h"

namespace batchfit {

QString ReportSections::assumptionsTitle() const {
    return ReportText::tr("Assumptions");
}

QStringList ReportSections::assumptions() const {
    const TrainingConfig& c = m_data.request.config;
    const GpuSpec& g = m_data.request.gpu;
    const Estimate& e = m_data.estimate;
    QStringList out;
    out << ReportText::tr(
        "Every figure is computed by the BatchFit estimator from the model's layers and the set-up above; "
        "nothing in this report was measured on a GPU.");
    if (!m_data.request.measured.empty())
        out << ReportText::tr("The marks labelled \"measured\" on the chart were supplied by the user.");
    for (const MeasuredPoint& m : m_data.request.measured) {
        if (m.estimatedBytes == 0) continue;
        const QString figure =
            m.label == QLatin1String(kMeasuredPeakLabel)
                ? ReportText::tr("torch.cuda.max_memory_allocated(), against the estimated peak allocated")
            : m.label == QLatin1String(kMeasuredSumLabel)
                ? ReportText::tr("parameters + gradients + optimizer states + saved activations, as PyTorch "
                                 "counted them")
                : m.label;
        out << ReportText::tr("Measured at batch %1 (%2): %3; the estimate of the same figure is %4 (%5 of "
                              "the measured).")
                   .arg(ReportText::number(m.batch), figure, ReportText::bytes(m.bytes),
                        ReportText::bytes(m.estimatedBytes),
                        ReportText::percentOf(m.estimatedBytes, m.bytes));
    }
    out << ReportText::tr(
        "Peak allocated is what torch.cuda.max_memory_allocated() would report: the tensors live at the "
        "step's peak, each rounded up as PyTorch's caching allocator rounds requests.");
    QStringList parts;
    for (const NonTorchPart& p : nonTorchParts(e.nonTorch)) {
        const QString b = ReportText::bytes(p.bytes);
        switch (p.kind) {
        case NonTorchPart::Kind::Context:
            parts << ReportText::tr("CUDA context %1").arg(b);
            break;
        case NonTorchPart::Kind::Cublas:
            parts << ReportText::tr("cuBLAS kernels %1").arg(b);
            break;
        case NonTorchPart::Kind::Eager:
            parts << ReportText::tr("eager module loading %1").arg(b);
            break;
        case NonTorchPart::Kind::Cudnn:
            parts << ReportText::tr("cuDNN %1").arg(b);
            break;
        case NonTorchPart::Kind::Nccl:
            parts << ReportText::tr("NCCL %1").arg(b);
            break;
        case NonTorchPart::Kind::Vllm:
            parts << ReportText::tr("colocated vLLM engine %1").arg(b);
            break;
        }
    }
    out << ReportText::tr(
               "Outside PyTorch: %1 (%2). The CUDA driver and libraries hold it outside PyTorch's allocator; "
               "nvidia-smi counts it, torch.cuda.memory_reserved() does not.")
               .arg(
                   ReportText::bytes(e.cudaContextBytes),
                   c.cudaContextBytes
                       ? ReportText::tr("measured, set for this report")
                       : ReportText::tr("for %1: %2").arg(QString::fromStdString(g.name), parts.join(" + ")));
    if (c.fragmentationFraction)
        out << ReportText::tr("Allocator reserve: %1, taken as %2 of the peak allocated, for the caching "
                              "allocator's segments "
                              "and fragmentation (reserved minus allocated).")
                   .arg(ReportText::bytes(e.allocatorReserveBytes),
                        ReportText::fraction(*c.fragmentationFraction));
    else
        out << ReportText::tr(
                   "Allocator reserve: %1, from a replay of the step's allocations through PyTorch's "
                   "CUDA caching allocator (%2; %3 iterations): reserved peaks at %4, of which %5 are "
                   "free pieces of split segments that cannot be returned.")
                   .arg(ReportText::bytes(e.allocatorReserveBytes),
                        e.allocator.allocConf.empty()
                            ? ReportText::tr("default settings")
                            : QStringLiteral("PYTORCH_CUDA_ALLOC_CONF=%1")
                                  .arg(QString::fromStdString(e.allocator.allocConf)),
                        QString::number(e.allocator.iterations),
                        ReportText::bytes(e.allocator.peakReservedBytes),
                        ReportText::bytes(e.allocator.peakInactiveSplitBytes));
    out << ReportText::tr(
        "Required = reserved + CUDA context: what nvidia-smi would show at the peak. A batch fits when "
        "the required memory is at most the usable memory.");
    const Verdict& v = m_data.verdict;
    if (v.fits && v.cacheReleased) // the figures above are a GPU large enough's; the table's are this one's
        out << ReportText::tr(
                   "On this GPU the replay, held to the usable memory, frees cached segments when a "
                   "cudaMalloc fails and retries: the allocator reserve is %1 and the step needs %2 "
                   "(the table's figures); the figures above are those of a GPU large enough.")
                   .arg(ReportText::bytes(v.reserveBytes), ReportText::bytes(v.requiredBytes));
    out << ReportText::tr("Safety margin: %1 of the capacity is held back, so %2 of %3 is usable.")
               .arg(ReportText::fraction(c.marginFraction), ReportText::bytes(m_data.verdict.usableBytes),
                    ReportText::bytes(g.memoryBytes));
    out << ReportText::tr(
               "cuBLAS workspace: %1 per handle, counted in temporaries when the model multiplies matrices.")
               .arg(ReportText::bytes(c.cublasWorkspaceBytes.value_or(g.cublasWorkspaceBytes)));
    out << (c.firstStep
                ? ReportText::tr("First training step: optimizer states are created inside optimizer.step().")
                : ReportText::tr("Steady state: optimizer states already exist when the step starts."));
    out << (c.zeroGradSetToNone
                ? ReportText::tr("Gradients are freed between steps (zero_grad(set_to_none=True)).")
                : ReportText::tr("Gradients stay allocated between steps (zero_grad(set_to_none=False))."));
    if (e.trainableParameterCount != e.parameterCount)
        out << ReportText::tr(
            "Frozen parameters (requires_grad=False) get no gradients and no optimizer states; "
            "layers before the first trainable one save nothing for the backward pass.");
    if (c.lora.rank > 0)
        out << ReportText::tr(
            "LoRA as PEFT runs it: adapters in fp32 on half weights (autocast_adapter_dtype), "
            "each adapted input copied to their dtype, one dropout per adapted layer.");
    if (c.lora.rank > 0 && c.lora.dora)
        out << ReportText::tr(
            "DoRA as PEFT runs it: each forward rebuilds B·A on an in × in identity and the row norms of the "
            "weight plus it, in the adapters' dtype (briefly several weight-sized tensors: the step's peak "
            "can be there), and keeps the base output and the adapter output of every adapted layer.");
    if (c.parallel.gpus > 1)
        out << ReportText::tr(
            "Data parallelism: one GPU of the group is simulated with its shards, the parameters it gathers "
            "and the buffers the framework allocates through PyTorch; NCCL's own buffers are outside "
            "PyTorch's allocator and not counted.");
    if (c.parallel.splitsSequence())
        out << ReportText::tr(
            "Sequence parallelism as Megatron-LM runs it: norms, dropouts and the residual stream split "
            "along the sequence over the tensor-parallel GPUs; each column-parallel linear gathers its input "
            "into one buffer kept for the whole step, saves only its own part and gathers it again in the "
            "backward.");
    if (c.parallel.pp > 1)
        out << ReportText::tr(
            "Pipeline parallelism, 1F1B: the first stage (the embedding) and the last (the head and the "
            "loss) are simulated and the one that needs more is shown; interleaved schedules are not "
            "modelled.");
    if (c.quant.enabled())
        out << ReportText::tr(
            "Quantized base weights as bitsandbytes 0.49 stores and runs them: every linear but the output "
            "head and tied weights packed (4-bit codes with an absmax per 64, or int8 with a scale per "
            "row), dequantized into a temporary weight in each matmul, forward and backward; the 4-bit "
            "matmul saves no input (bitsandbytes 0.43.2 and later), the int8 one keeps it.");
    if (c.quant.enabled() && c.quant.prepare)
        out << ReportText::tr(
            "prepare_model_for_kbit_training: the weights that are not quantized are fp32.");
    if (e.pagedStateBytes > 0)
        out << ReportText::tr("Paged optimizer: %1 of states live in CUDA managed memory, outside PyTorch's "
                              "counters and the peak; the driver moves them to host memory when the GPU "
                              "runs short.")
                   .arg(ReportText::bytes(e.pagedStateBytes));
    if (c.optimizerOffload)
        out << ReportText::tr(
                   "Optimizer states and master weights live in host memory: %1 of host RAM, not on the GPU.")
                   .arg(ReportText::bytes(e.hostBytes));
    if (c.paramOffload)
        out << ReportText::tr("Parameter offload: each GPU's parameter and gradient shards live in host memory "
                              "(%1), the optimizer steps there; %2 cross PCIe per step.")
                   .arg(ReportText::bytes(e.hostParameterBytes), ReportText::bytes(e.parameterTransferBytes));
    if (c.activationOffload != ActivationOffload::Off)
        out << ReportText::tr("Activation offload (%1): the saved tensors wait in %2 host memory, %3 of it; "
                              "%4 cross PCIe per step, to the host in the forward and back in the backward.")
                   .arg(QString::fromUtf8(
                            activationOffloadName(c.activationOffload).data(),
                            static_cast<qsizetype>(activationOffloadName(c.activationOffload).size())),
                        c.activationOffload == ActivationOffload::All ? ReportText::tr("pageable")
                                                                      : ReportText::tr("pinned"),
                        ReportText::bytes(e.hostActivationBytes),
                        ReportText::bytes(e.activationTransferBytes));
    if (c.recipe == Recipe::Dpo)
        out << (c.refLogps == RefLogps::Precomputed
                    ? ReportText::tr(
                          "DPO (TRL's DPOTrainer): the batch of %1 counts preference pairs, run as %2 "
                          "sequences; the reference log-probabilities were computed before training.")
                          .arg(e.batch)
                          .arg(2 * e.batch)
                    : ReportText::tr(
                          "DPO (TRL's DPOTrainer): the batch of %1 counts preference pairs, run as %2 "
                          "sequences; a reference forward without gradients follows the policy's in "
                          "every step, on %3.")
                          .arg(e.batch)
                          .arg(2 * e.batch)
                          .arg(e.referenceModelBytes > 0
                                   ? ReportText::tr(
                                         "a frozen copy of the model (%1 more parameters on the GPU)")
                                         .arg(ReportText::bytes(e.referenceModelBytes))
                                   : ReportText::tr("the base model, the LoRA adapters disabled")));
    if (c.recipe == Recipe::Grpo)
        out << ReportText::tr(
                   "GRPO (TRL's GRPOTrainer): the batch of %1 counts completions of %2-token prompts; "
                   "%3 sequences are generated at a time (%4) %6; %5.")
                   .arg(e.batch)
                   .arg(e.promptTokens)
                   .arg(e.batch * c.generationSteps())
                   .arg(c.generation == Generation::Transformers
                            ? ReportText::tr("transformers' generate() on this GPU")
                        : c.generation == Generation::VllmColocate
                            ? ReportText::tr("a colocated vLLM engine, its share counted outside PyTorch")
                            : ReportText::tr("a vLLM server on other GPUs"))
                   .arg(c.refLogps != RefLogps::Live ? ReportText::tr("no reference model (beta 0)")
                        : e.referenceModelBytes > 0
                            ? ReportText::tr("the reference's log-probabilities come from a frozen copy of "
                                             "the model (%1 more parameters on the GPU)")
                                  .arg(ReportText::bytes(e.referenceModelBytes))
                            : ReportText::tr("the reference's log-probabilities come from the base model, "
                                             "the LoRA adapters disabled"))
                   .arg(c.grpoGeneratesMidStep() ? ReportText::tr("at a micro-batch with gradients held")
                                                 : ReportText::tr("before the first micro-batch"));
    if (!g.source.empty())
        out << ReportText::tr("GPU memory size: %1 (source: %2).")
                   .arg(ReportText::bytes(g.memoryBytes), QString::fromStdString(g.source));
    return out;
}

QString ReportSections::glossaryTitle() const {
    return ReportText::tr("What the components are");
}

QStringList ReportSections::glossary() const {
    return {
        ReportText::tr("Parameters: the model's weights and buffers on the GPU."),
        ReportText::tr("Gradients: the .grad tensors of the trainable parameters that are live at the peak."),
        ReportText::tr(
            "Optimizer states: e.g. Adam's exp_avg and exp_avg_sq, and master weights in mixed precision."),
        ReportText::tr(
            "Activations: the tensors autograd saves for the backward pass (the layer table attributes each "
            "to the layer that created it)."),
        ReportText::tr(
            "Temporaries: short-lived buffers live at the peak, such as an op's intermediate results, "
            "gradients being computed and cuBLAS workspaces."),
        ReportText::tr(
            "Allocator reserve and CUDA context: memory nvidia-smi shows beyond the allocated tensors.")};
}

QString ReportSections::generatedLine() const {
    return ReportText::tr("Generated by BatchFit %1 on %2")
        .arg(QStringLiteral(BATCHFIT_VERSION), ReportText::date(m_data.request.generatedAt));
}

QString ReportSections::pageLabel(int page, int pages) const {
    return ReportText::tr("Page %1 of %2").arg(page).arg(pages);
}

} // namespace batchfit
