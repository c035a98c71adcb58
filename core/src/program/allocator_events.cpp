#include "program/allocator_events.h"

namespace batchfit {

bool stepIsRepeatable(const StepProgram& p) {
    std::vector<char> freed(p.instances.size(), 0);
    for (const auto& st : p.steps)
        for (int f : st.frees) freed[static_cast<std::size_t>(f)] = 1;
    for (std::size_t s = 1; s < p.steps.size(); ++s)
        for (int a : p.steps[s].allocs)
            if (!freed[static_cast<std::size_t>(a)]) return false;
    return true;
}

namespace {

// Appends one program step's events: its allocations, its temporaries (allocated, then freed), its frees.
struct Emitter {
    const StepProgram& p;
    std::vector<std::uint64_t>& size;
    std::uint64_t idOffset;
    StepEvents& out;

    void sizes(std::int64_t batch) {
        size.resize(p.groups.size());
        for (std::size_t g = 0; g < p.groups.size(); ++g) size[g] = p.groups[g].atUnchecked(batch);
    }
    void emit(AllocatorEvent::Kind kind, int inst) {
        const auto& in = p.instances[static_cast<std::size_t>(inst)];
        out.events.push_back(
            AllocatorEvent{kind, static_cast<std::uint64_t>(inst) + idOffset,
                           kind == AllocatorEvent::Kind::Alloc ? size[static_cast<std::size_t>(in.group)] : 0,
                           0, static_cast<int>(in.component)});
    }
    bool skipSetup = false; ///< the steady step after a first step: its set-up instances exist already

    void step(std::size_t s) {
        const auto& st = p.steps[s];
        for (int a : st.allocs) emit(AllocatorEvent::Kind::Alloc, a);
        for (int t : st.transients) emit(AllocatorEvent::Kind::Alloc, t);
        for (int t : st.transients) emit(AllocatorEvent::Kind::Free, t);
        for (int f : st.frees)
            if (!skipSetup || !p.setupInstance[static_cast<std::size_t>(f)])
                emit(AllocatorEvent::Kind::Free, f);
    }
    std::size_t last() const { return out.events.empty() ? 0 : out.events.size() - 1; }
};

} // namespace

void buildStepEvents(const StepProgram& p, std::int64_t batch, StepEvents& out) {
    out.events.clear();
    out.stepEnd.assign(p.steps.size(), 0);
    out.warmEnd.clear();
    out.earlierEnd.clear();
    out.lastEnd.clear();
    out.lastBatch = p.lastBatch(batch);
    out.iterations = p.replayIterations(batch);
    if (p.steps.empty()) return;
    thread_local std::vector<std::uint64_t> size, warmSize, earlierSize, lastSize;
    Emitter steady{p, size, 0, out};
    steady.sizes(batch);
    if (const StepProgram* w = p.warmup(); w && out.iterations >= 2) {
        // A first step (its set-up without optimizer states, which its step() creates and keeps), then the
        // steady-state step on the cache it left. The steady step's own set-up is what the first step made.
        Emitter first{*w, warmSize, 0, out};
        first.sizes(batch);
        for (std::size_t s = 0; s < w->steps.size(); ++s) {
            first.step(s);
            out.warmEnd.push_back(first.last());
        }
        // Earlier steady steps at other sequence lengths: each frees what it allocates, so each takes fresh
        // ids.
        std::uint64_t offset = w->instances.size();
        for (const auto& earlier : p.earlierSteps()) {
            Emitter e{*earlier, earlierSize, offset, out};
            e.sizes(batch);
            e.skipSetup = true;
            auto& ends = out.earlierEnd.emplace_back();
            ends.push_back(e.last());
            for (std::size_t s = 1; s < earlier->steps.size(); ++s) {
                e.step(s);
                ends.push_back(e.last());
            }
            offset += earlier->instances.size();
        }
        // The epoch's last, smaller batch: the steady step at its own batch size, with fresh ids.
        if (out.lastBatch > 0) {
            Emitter e{p, lastSize, offset, out};
            e.sizes(out.lastBatch);
            e.skipSetup = true;
            out.lastEnd.push_back(e.last());
            for (std::size_t s = 1; s < p.steps.size(); ++s) {
                e.step(s);
                out.lastEnd.push_back(e.last());
            }
            offset += p.instances.size();
        }
        out.stepEnd[0] = steady.last();
        steady.idOffset = offset;
        steady.skipSetup = true;
        for (std::size_t s = 1; s < p.steps.size(); ++s) {
            steady.step(s);
            out.stepEnd[s] = steady.last();
        }
        return;
    }
    steady.step(0);
    out.stepEnd[0] = steady.last();
    for (std::size_t s = 1; s < p.steps.size(); ++s) {
        steady.step(s);
        out.stepEnd[s] = steady.last();
    }
}

} // namespace batchfit
