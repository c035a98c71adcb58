#include "batchfit/estimator.h"

#include "program/allocator_events.h"
#include "program/peak_evaluator.h"
#include "program/step_program.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <system_error>
#include <thread>

namespace batchfit {

Estimator::Estimator(std::shared_ptr<const StepProgram> program) : m_program(std::move(program)) {}

Result<Estimator> Estimator::create(const Model& model, const TrainingConfig& config,
                                    std::uint64_t cudaContextBytes) {
    auto p = StepProgram::lower(model, config, cudaContextBytes);
    if (!p) return p.error();
    Estimator e(std::move(*p));
    if (auto st = e.addPipelineStages(model, config, cudaContextBytes); !st) return st.error();
    return e;
}

Result<Estimator> Estimator::create(const Model& model, const TrainingConfig& config, const GpuSpec& gpu) {
    TrainingConfig c = config;
    if (!c.cublasWorkspaceBytes) c.cublasWorkspaceBytes = gpu.cublasWorkspaceBytes;
    if (c.gpuArch.empty()) c.gpuArch = gpu.arch;
    if (c.gpuBytes == 0) c.gpuBytes = gpu.memoryBytes;
    return create(model, c, gpu.contextBytes);
}

Result<Estimate> Estimator::estimate(std::int64_t batch, bool withTimeline) const {
    if (!m_stages.empty()) return stageEstimate(batch, withTimeline);
    return m_program->evaluate(batch, withTimeline);
}

static Error tooLarge(std::int64_t batch) {
    return makeError("batch size " + std::to_string(batch) +
                     " is out of range or too large to count (bytes would overflow)");
}

Result<std::uint64_t> Estimator::peakAllocatedBytes(std::int64_t batch) const {
    if (!m_stages.empty()) return m_stages[heavierStage(batch)].peakAllocatedBytes(batch);
    auto p = m_program->peak(batch);
    if (!p) return tooLarge(batch);
    return *p;
}

Result<std::uint64_t> Estimator::requiredBytes(std::int64_t batch) const {
    if (!m_stages.empty()) return m_stages[heavierStage(batch)].requiredBytes(batch);
    auto r = m_program->requiredAt(batch);
    if (!r) return tooLarge(batch);
    return *r;
}

std::uint64_t Estimator::usableBytes(std::uint64_t capacityBytes) const {
    const double margin = m_program->config().marginFraction;
    const double usable = std::floor(static_cast<double>(capacityBytes) * (1.0 - margin));
    // A capacity near 2^64 rounds up to 2^64 as a double, which no uint64 holds; never report above the
    // capacity.
    if (usable >= 18446744073709551616.0) return capacityBytes;
    return std::min(static_cast<std::uint64_t>(usable), capacityBytes);
}

std::optional<std::uint64_t> Estimator::driverLimit(std::uint64_t bytes) const {
    const std::uint64_t context = m_program->contextBytes();
    return bytes > context ? bytes - context : 0;
}

bool Estimator::replayFits(std::int64_t batch, std::uint64_t usable) const {
    auto r = m_program->replay(batch, driverLimit(usable));
    return r && !r->oom;
}

std::optional<std::uint64_t> Estimator::leastRequired(std::int64_t batch) const {
    constexpr std::uint64_t kSegment = 2u << 20;
    const auto peak = m_program->peak(batch);
    if (!peak) return std::nullopt;
    return (*peak + kSegment - 1) / kSegment * kSegment + m_program->contextBytes();
}

Result<FitDecision> Estimator::decide(std::int64_t batch, std::uint64_t usable,
                                      std::uint64_t required) const {
    FitDecision d;
    d.requiredBytes = required;
    d.fits = required <= usable;
    if (m_program->replays() && !d.fits) {
        // Held to the usable bytes, the allocator frees its cache before it gives up: it may still fit,
        // unless what it cannot go below is already too much.
        const auto least = leastRequired(batch);
        if (!least || *least > usable) return d;
        auto held = m_program->replay(batch, driverLimit(usable));
        if (!held) return held.error();
        if (!held->oom) {
            d.fits = true;
            d.requiredBytes = held->stats.peakReservedBytes + m_program->contextBytes();
        }
    }
    d.cacheReleased = d.requiredBytes < required;
    return d;
}

Result<FitDecision> Estimator::fitAt(std::int64_t batch, std::uint64_t capacityBytes) const {
    if (!m_stages.empty()) return stagesFitAt(batch, capacityBytes);
    auto r = requiredBytes(batch); // on a GPU large enough
    if (!r) return r.error();
    return decide(batch, usableBytes(capacityBytes), *r);
}

Result<Verdict> Estimator::verdict(std::int64_t batch, std::uint64_t capacityBytes) const {
    if (!m_stages.empty()) return stagesVerdict(batch, capacityBytes);
    auto d = fitAt(batch, capacityBytes);
    if (!d) return d.error();
    Verdict v;
    v.capacityBytes = capacityBytes;
    v.usableBytes = usableBytes(capacityBytes);
    v.fits = d->fits;
    v.cacheReleased = d->cacheReleased;
    const std::uint64_t need = d->requiredBytes;
    if (m_program->replays() && (!v.fits || v.cacheReleased)) {
        auto whole = m_program->replay(batch, driverLimit(capacityBytes), false, {}, capacityBytes);
        if (whole && whole->oom) v.oom = whole->oom;
    }
    v.requiredBytes = need;
    const std::uint64_t live = m_program->peak(batch).value_or(0) + m_program->contextBytes();
    v.reserveBytes = need > live ? need - live : 0;
    // Saturating: usable can be up to 2^64 - 1, which does not fit an int64.
    constexpr std::uint64_t kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    v.headroomBytes = v.fits ? static_cast<std::int64_t>(std::min(v.usableBytes - need, kMax))
                             : -static_cast<std::int64_t>(std::min(need - v.usableBytes, kMax));
    return v;
}

MaxBatch Estimator::maxBatch(std::uint64_t capacityBytes) const {
    if (!m_stages.empty()) return stagesMaxBatch(capacityBytes);
    const std::uint64_t usable = usableBytes(capacityBytes);
    // With the replay, leastRequired() is monotone in the batch: its largest batch bounds the replay's from
    // above.
    auto fits = [&](std::int64_t b) {
        if (!m_program->replays()) {
            auto p = m_program->peak(b);
            return p && m_program->required(*p) <= usable;
        }
        auto least = leastRequired(b);
        return least && *least <= usable;
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
    if (m_program->replays()) {
        out.replayed = true;
        if (!replayFits(lo, usable)) {
            // Below the bound: gallop down (fragmentation costs a few percent, so the answer is near), then
            // bisect. `good` fits, `bad` does not.
            out.capped = false;
            std::int64_t good = 0, bad = lo;
            for (std::int64_t gap = 1;; gap *= 2) {
                const std::int64_t b = lo - gap;
                if (b < 1) break;
                if (replayFits(b, usable)) {
                    good = b;
                    break;
                }
                bad = b;
            }
            if (good == 0 && bad > 1 && replayFits(1, usable)) good = 1;
            if (good > 0) {
                while (bad - good > 1) {
                    const std::int64_t mid = good + (bad - good) / 2;
                    if (replayFits(mid, usable))
                        good = mid;
                    else
                        bad = mid;
                }
            }
            lo = good;
            if (lo == 0) return out;
        }
        out.largest = lo;
        out.largestMultipleOf8 = lo / 8 * 8;
        auto held = m_program->replay(lo, driverLimit(usable));
        out.requiredAtLargest =
            held && !held->oom ? held->stats.peakReservedBytes + m_program->contextBytes() : 0;
        return out;
    }
    out.largest = lo;
    out.largestMultipleOf8 = lo / 8 * 8;
    out.requiredAtLargest = m_program->required(*m_program->peak(lo));
    return out;
}

Result<std::vector<SweepPoint>> Estimator::sweep(std::int64_t from, std::int64_t to, std::int64_t step,
                                                 bool logScale, std::optional<std::uint64_t> capacity) const {
    if (!m_stages.empty()) return stagesSweep(from, to, step, logScale, capacity);
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
        if (!m_program->replays()) {
            p.requiredBytes = m_program->required(p.peakAllocatedBytes);
            if (capacity)
                if (auto d = decide(b, usableBytes(*capacity), p.requiredBytes)) p.fit = *d;
        }
        out.push_back(p);
        if (logScale) {
            if (b > last / step) break;
            b *= step;
        } else {
            if (b > last - step) break;
            b += step;
        }
    }
    if (m_program->replays()) {
        // One allocator replay per point, independent of the others: spread over the hardware threads
        // (the replay's buffers are thread-local; the program is read only).
        auto replayFrom = [&](std::size_t first, std::size_t stride) {
            for (std::size_t i = first; i < out.size(); i += stride) {
                auto r = m_program->requiredAt(out[i].batch);
                out[i].requiredBytes = r ? *r : std::numeric_limits<std::uint64_t>::max();
                if (!capacity) continue;
                out[i].fit = FitDecision{false, false, out[i].requiredBytes}; // too large to count: no fit
                if (!r) continue;
                if (auto d = decide(out[i].batch, usableBytes(*capacity), *r)) out[i].fit = *d;
            }
        };
        const std::size_t threads = std::min<std::size_t>(
            {std::max(1u, std::thread::hardware_concurrency()), 16, out.size() / 8 + 1});
        std::vector<std::thread> pool;
        std::size_t started = 1;
        try {
            for (; started < threads; ++started) pool.emplace_back(replayFrom, started, threads);
        } catch (const std::system_error&) { // no more threads: this one replays what is left
        }
        for (std::size_t t = started; t < threads; ++t) replayFrom(t, threads);
        replayFrom(0, threads);
        for (auto& th : pool) th.join();
    }
    return out;
}

Result<ReplayResult> Estimator::replayStep(std::int64_t batch, std::optional<std::uint64_t> limitBytes,
                                           std::optional<std::size_t> snapshotStep) const {
    if (!m_stages.empty()) return m_stages[heavierStage(batch)].replayStep(batch, limitBytes, snapshotStep);
    return m_program->replay(batch, limitBytes, true, snapshotStep);
}

Result<std::vector<AllocatorEvent>> Estimator::allocatorEvents(std::int64_t batch) const {
    if (!m_stages.empty()) return m_stages[heavierStage(batch)].allocatorEvents(batch);
    if (batch < 1 || batch > m_program->maxSafeBatch()) return tooLarge(batch);
    StepEvents ev;
    buildStepEvents(*m_program, batch, ev);
    return std::move(ev.events);
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
