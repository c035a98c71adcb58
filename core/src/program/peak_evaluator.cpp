#include "program/peak_evaluator.h"

#include <algorithm>
#include <map>

namespace batchfit {
namespace {

struct Line {
    long double c = 0, k = 0, slack = 0;
    long double at(std::int64_t b) const { return c + k * static_cast<long double>(b); }
};

} // namespace

PeakEvaluator::PeakEvaluator(const StepProgram& p, std::int64_t lo, std::int64_t hi) : m_program(p) {
    const auto& inst = p.instances;
    // Unrounded live line (and rounding slack) at each step's peak moment.
    std::vector<Line> lines(p.steps.size());
    Line live;
    auto add = [&](Line& l, int i, long double sign) {
        const auto& b = inst[static_cast<std::size_t>(i)].bytes;
        l.c += sign * static_cast<long double>(b.constant);
        l.k += sign * static_cast<long double>(b.perSample);
        if (!b.isZero()) l.slack += sign * 511;
    };
    for (std::size_t s = 0; s < p.steps.size(); ++s) {
        for (int a : p.steps[s].allocs) add(live, a, 1);
        Line now = live;
        for (int t : p.steps[s].transients) add(now, t, 1);
        lines[s] = now;
        for (int f : p.steps[s].frees) add(live, f, -1);
    }
    // Reference lines: the highest at lo, mid and hi. A step whose upper bound is below one reference line at
    // both ends of the range is below it everywhere in between, so it is never the peak.
    const std::int64_t mid = lo + (hi - lo) / 2;
    std::vector<std::size_t> refs;
    for (std::int64_t b : {lo, mid, hi}) {
        std::size_t best = 0;
        for (std::size_t s = 1; s < lines.size(); ++s)
            if (lines[s].at(b) > lines[best].at(b)) best = s;
        refs.push_back(best);
    }
    std::vector<bool> keep(lines.size(), false);
    for (std::size_t s = 0; s < lines.size(); ++s) {
        bool pruned = false;
        for (std::size_t r : refs) {
            const Line& R = lines[r];
            const Line& S = lines[s];
            if (S.at(lo) + S.slack < R.at(lo) && S.at(hi) + S.slack < R.at(hi)) {
                pruned = true;
                break;
            }
        }
        keep[s] = !pruned;
    }
    // Walk again with live counts per (group, component); snapshot the kept steps.
    const int comps = kComponentCount;
    std::vector<std::uint64_t> counts(p.groups.size() * static_cast<std::size_t>(comps), 0);
    auto bump = [&](int i, int d) {
        const auto& in = inst[static_cast<std::size_t>(i)];
        auto& n = counts[static_cast<std::size_t>(in.group) * comps + static_cast<std::size_t>(in.component)];
        if (d > 0)
            ++n;
        else
            --n; // every free follows its allocation: never below zero
    };
    for (std::size_t s = 0; s < p.steps.size(); ++s) {
        const auto& st = p.steps[s];
        for (int a : st.allocs) bump(a, 1);
        if (keep[s]) {
            for (int t : st.transients) bump(t, 1);
            std::vector<Entry> e;
            for (std::size_t i = 0; i < counts.size(); ++i)
                if (counts[i])
                    e.push_back(Entry{static_cast<int>(i / comps), static_cast<int>(i % comps), counts[i]});
            m_candidates.push_back(std::move(e));
            for (int t : st.transients) bump(t, -1);
        }
        for (int f : st.frees) bump(f, -1);
    }
    m_size.resize(p.groups.size());
}

void PeakEvaluator::sizes(std::int64_t batch) const {
    const auto& g = m_program.groups;
    for (std::size_t i = 0; i < g.size(); ++i) m_size[i] = roundAllocation(g[i].atUnchecked(batch));
}

std::uint64_t PeakEvaluator::peak(std::int64_t batch) const {
    sizes(batch);
    std::uint64_t best = 0;
    for (const auto& c : m_candidates) {
        std::uint64_t t = 0;
        for (const auto& e : c) t += e.count * m_size[static_cast<std::size_t>(e.group)];
        best = std::max(best, t);
    }
    return best;
}

ComponentBytes PeakEvaluator::atPeak(std::int64_t batch) const {
    sizes(batch);
    ComponentBytes best;
    std::uint64_t bestTotal = 0;
    for (const auto& c : m_candidates) {
        ComponentBytes now;
        for (const auto& e : c) now.bytes[e.component] += e.count * m_size[static_cast<std::size_t>(e.group)];
        const std::uint64_t t = now.total();
        if (t > bestTotal || bestTotal == 0) {
            bestTotal = t;
            best = now;
        }
    }
    return best;
}

} // namespace batchfit
