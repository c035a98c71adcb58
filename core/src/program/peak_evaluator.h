#pragma once
// Fast exact peaks over a batch range. Live bytes at every step are affine in the batch before rounding, and
// rounding adds at most 511 bytes per live block, so most steps provably cannot be the peak anywhere in the
// range. The evaluator keeps the others with their live blocks counted per size group: one batch then costs
// (groups + candidates x their groups) operations instead of a walk over every allocation.
#include "program/step_program.h"

#include <optional>
#include <vector>

namespace batchfit {

class PeakEvaluator {
public:
    PeakEvaluator(const StepProgram& program, std::int64_t lo, std::int64_t hi);

    /// Exact peak and components at the peak, for lo <= batch <= hi.
    ComponentBytes atPeak(std::int64_t batch) const;
    std::uint64_t peak(std::int64_t batch) const;
    std::size_t candidateCount() const { return m_candidates.size(); }

private:
    struct Entry {
        int group;
        int component;
        std::uint64_t count;
    };
    const StepProgram& m_program;
    std::vector<std::vector<Entry>> m_candidates;
    mutable std::vector<std::uint64_t> m_size;
    void sizes(std::int64_t batch) const;
};

} // namespace batchfit
