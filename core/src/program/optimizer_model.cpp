#include "program/optimizer_model.h"

namespace batchfit {

int stateDtypeSize(const TrainingConfig& c, int paramDtypeSize) {
    switch (c.precision) {
    case Precision::PureFp16:
    case Precision::PureBf16:
        return paramDtypeSize;
    default:
        return 4;
    }
}

static bool halfWeightsWithMaster(const TrainingConfig& c) {
    return c.precision == Precision::MixedFp16Master || c.precision == Precision::MixedBf16Master;
}

bool fsdpMixedPrecision(const TrainingConfig& c) {
    return halfWeightsWithMaster(c) && c.parallel.enabled() && isFsdp(c.parallel.strategy);
}

static bool hasMaster(const TrainingConfig& c) {
    return halfWeightsWithMaster(c) && !fsdpMixedPrecision(c);
}

OptimizerCost optimizerCost(const TrainingConfig& c, const Shape& shape, std::uint64_t n,
                            int paramDtypeSize) {
    const std::uint64_t s = static_cast<std::uint64_t>(stateDtypeSize(c, paramDtypeSize));
    constexpr std::uint64_t kStepTensor = 4; // torch >= 1.12: a 0-dim float32 `step` tensor per parameter
    OptimizerCost out;
    switch (c.optimizer) {
    case OptimizerKind::Sgd:
        break;
    case OptimizerKind::SgdMomentum:
    case OptimizerKind::SgdNesterov:
        out.add(n * s); // momentum_buffer
        break;
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW:
        // torch/optim/adam.py _init_group: exp_avg, exp_avg_sq (and max_exp_avg_sq), each its own tensor;
        // `step` a CPU scalar unless capturable or fused
        for (int i = 0; i < (c.amsgrad ? 3 : 2); ++i) out.add(n * s);
        out.stateBytes += kStepTensor;
        out.hostStepBytes = kStepTensor;
        break;
    case OptimizerKind::RmsProp: // torch 1.13/2.x RMSprop keeps `step` as a Python int here
        out.add(n * s);          // square_avg
        if (c.rmspropMomentum) out.add(n * s);
        if (c.rmspropCentered) out.add(n * s); // grad_avg
        break;
    case OptimizerKind::Adagrad:
        out.add(n * s); // sum
        out.stateBytes += kStepTensor;
        out.hostStepBytes = kStepTensor;
        break;
    case OptimizerKind::Adafactor: {
        // Hugging Face Adafactor (beta1 = None): factored second moment for >= 2-D tensors, fp32:
        // exp_avg_sq_row and exp_avg_sq_col.
        if (shape.size() >= 2) {
            const std::uint64_t cols = static_cast<std::uint64_t>(shape.back());
            const std::uint64_t rows = static_cast<std::uint64_t>(shape[shape.size() - 2]);
            const std::uint64_t lead =
                rows && cols ? n / (rows * cols) : 0; // a zero-size tensor has no state
            out.add(lead * rows * 4);
            out.add(lead * cols * 4);
        } else {
            out.add(n * 4);
        }
        break;
    }
    case OptimizerKind::Lion:
        out.add(n * s); // exp_avg
        break;
    case OptimizerKind::Adam8bit:
    case OptimizerKind::PagedAdamW8bit:
        // bitsandbytes Optimizer2State.init_state (optim/optimizer.py, 0.42-0.50): tensors under
        // min_8bit_size (4096) keep 32-bit states; others one uint8 per element per state plus one fp32
        // absmax per 256-element block per state (blocksize = 256; the paper's 2048 is not the code's).
        if (n < 4096) {
            out.add(n * 4);
            out.add(n * 4);
        } else {
            // get_state_buffer: paged (cudaMallocManaged) only for tensors of at least 1e5 elements
            const bool paged = c.optimizer == OptimizerKind::PagedAdamW8bit && n >= 100000;
            for (int i = 0; i < 2; ++i) {
                if (paged)
                    out.stateBytes += n, out.pagedBytes += n;
                else
                    out.add(n);
            }
            out.add(((n + 255) / 256) * 4); // absmax1
            out.add(((n + 255) / 256) * 4); // absmax2
        }
        break;
    case OptimizerKind::PagedAdamW:
        // Optimizer2State with optim_bits=32: state1 and state2 in fp32; `step` is a Python int.
        if (n >= 100000) {
            out.stateBytes = out.pagedBytes = 2 * n * 4;
        } else {
            out.add(n * 4);
            out.add(n * 4);
        }
        break;
    }
    if (hasMaster(c)) out.add(n * 4); // fp32 master weights
    return out;
}

double stepTemporaryFactor(const TrainingConfig& c) {
    const OptimizerImpl impl = resolvedImpl(c);
    const bool forLoop = impl == OptimizerImpl::ForLoop;
    if (impl == OptimizerImpl::Fused || c.optimizer == OptimizerKind::Adam8bit ||
        isPagedOptimizer(c.optimizer))
        return 0.0;
    switch (c.optimizer) {
    case OptimizerKind::Sgd:
        return 0.0;
    case OptimizerKind::SgdMomentum:
        return 0.0;
    case OptimizerKind::SgdNesterov:
        return 1.0;
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW:
        return forLoop ? 2.0 : 1.0; // sqrt(v) then / bias_correction (for-loop)
    case OptimizerKind::RmsProp:
        return c.rmspropCentered ? 2.0 : 1.0;
    case OptimizerKind::Adagrad:
        return 1.0;
    case OptimizerKind::Adafactor:
        return 3.0;
    case OptimizerKind::Lion:
        return 2.0;
    case OptimizerKind::Adam8bit:
    case OptimizerKind::PagedAdamW:
    case OptimizerKind::PagedAdamW8bit:
        return 0.0;
    }
    return 0.0;
}

std::uint64_t optimizerSharedBytes(const TrainingConfig& c) {
    // name2qmap "dynamic" and "udynamic": 256 fp32 values each, shared by every 8-bit state
    return c.optimizer == OptimizerKind::Adam8bit || c.optimizer == OptimizerKind::PagedAdamW8bit
               ? 2 * 256 * 4
               : 0;
}

} // namespace batchfit
