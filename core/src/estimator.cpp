#include "batchfit/estimator.h"

#include "program/peak_evaluator.h"
#include "program/step_program.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace batchfit {

Estimator::Estimator(std::shared_ptr<const StepProgram> program) : m_program(std::move(program)) {}

Result<Estimator> Estimator::create(const Model& model, const TrainingConfig& config,
                                    std::uint64_t cudaContextBytes) {
    auto p = StepProgram::lower(model, config, cudaContextBytes);
    if (!p) return p.error();
    return Estimator(std::move(*p));
}

Result<Estimator> Estimator::create(const Model& model, const TrainingConfig& config, const GpuSpec& gpu) {
    TrainingConfig c = config;
    if (!c.cublasWorkspaceBytes) c.cublasWorkspaceBytes = gpu.cublasWorkspaceBytes;
    if (c.gpuArch.empty()) c.gpuArch = gpu.arch;
    return create(model, c, gpu.contextBytes);
}

Result<Estimate> Estimator::estimate(std::int64_t batch, bool withTimeline) const {
    return m_program->evaluate(batch, withTimeline);
}

static Error tooLarge(std::int64_t batch) {
    return makeError("batch size " + std::to_string(batch) +
                     " is out of range or too large to count (bytes would overflow)");
}

Result<std::uint64_t> Estimator::peakAllocatedBytes(std::int64_t batch) const {
    auto p = m_program->peak(batch);
    if (!p) return tooLarge(batch);
    return *p;
}

Result<std::uint64_t> Estimator::requiredBytes(std::int64_t batch) const {
    auto p = m_program->peak(batch);
    if (!p) return tooLarge(batch);
    return m_program->required(*p);
}

std::uint64_t Estimator::usableBytes(std::uint64_t capacityBytes) const {
    const double margin = m_program->config().marginFraction;
    const double usable = std::floor(static_cast<double>(capacityBytes) * (1.0 - margin));
    // A capacity near 2^64 rounds up to 2^64 as a double, which no uint64 holds; never report above the
    // capacity.
    if (usable >= 18446744073709551616.0) return capacityBytes;
    return std::min(static_cast<std::uint64_t>(usable), capacityBytes);
}

Result<Verdict> Estimator::verdict(std::int64_t batch, std::uint64_t capacityBytes) const {
    auto r = requiredBytes(batch);
    if (!r) return r.error();
    Verdict v;
    v.capacityBytes = capacityBytes;
    v.usableBytes = usableBytes(capacityBytes);
    v.fits = *r <= v.usableBytes;
    // Saturating: usable can be up to 2^64 - 1, which does not fit an int64.
    constexpr std::uint64_t kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    v.headroomBytes = v.fits ? static_cast<std::int64_t>(std::min(v.usableBytes - *r, kMax))
                             : -static_cast<std::int64_t>(std::min(*r - v.usableBytes, kMax));
    return v;
}

MaxBatch Estimator::maxBatch(std::uint64_t capacityBytes) const {
    const std::uint64_t usable = usableBytes(capacityBytes);
    auto fits = [&](std::int64_t b) {
        auto p = m_program->peak(b);
        return p && m_program->required(*p) <= usable;
    };
    MaxBatch out;
    if (!fits(1)) return out;
    // Exponential search for a failing batch, then bisection: required(b) is monotone in b.
    std::int64_t lo = 1, hi = 2;
    while (hi <= kMaxBatch && fits(hi)) {
        lo = hi;
        if (hi == kMaxBatch) break;
        hi = std::min<std::int64_t>(hi * 2, kMaxBatch);
    }
    if (lo == kMaxBatch) {
        out.capped = true;
        hi = kMaxBatch + 1;
    }
    while (hi - lo > 1) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        if (fits(mid))
            lo = mid;
        else
            hi = mid;
    }
    out.largest = lo;
    out.largestMultipleOf8 = lo / 8 * 8;
    out.requiredAtLargest = m_program->required(*m_program->peak(lo));
    return out;
}

Result<std::vector<SweepPoint>> Estimator::sweep(std::int64_t from, std::int64_t to, std::int64_t step,
                                                 bool logScale) const {
    if (from < 1 || to < from || to > kMaxBatch)
        return makeError("sweep range must satisfy 1 <= from <= to <= 2^31");
    if (step < 1 || (logScale && step < 2))
        return makeError("sweep step must be >= 1 (>= 2 for a log sweep)");
    std::vector<SweepPoint> out;
    const std::int64_t last = std::min(to, m_program->maxSafeBatch());
    if (last < from) return out;
    const PeakEvaluator fast(*m_program, from, last);
    for (std::int64_t b = from; b <= last;) {
        SweepPoint p;
        p.batch = b;
        p.atPeak = fast.atPeak(b);
        p.peakAllocatedBytes = p.atPeak.total();
        p.requiredBytes = m_program->required(p.peakAllocatedBytes);
        out.push_back(p);
        if (logScale) {
            if (b > last / step) break;
            b *= step;
        } else {
            if (b > last - step) break;
            b += step;
        }
    }
    return out;
}

const TrainingConfig& Estimator::config() const {
    return m_program->config();
}
std::uint64_t Estimator::parameterCount() const {
    return m_program->totals().parameterCount;
}

std::uint64_t Estimator::trainableParameterCount() const {
    return m_program->totals().trainableParameterCount;
}

} // namespace batchfit
