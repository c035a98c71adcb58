#include "program/allocator_events.h"

#include <algorithm>

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

// Appends one program step's events: its allocations, its temporaries (allocated, then freed in reverse), its
// frees.
struct Emitter {
    const StepProgram& p;
    std::vector<std::uint64_t>& size;
    std::uint64_t idOffset;
    StepEvents& out;
    std::uint64_t workspaceCap = UINT64_MAX;

    void sizes(std::int64_t batch) {
        size.resize(p.groups.size());
        for (std::size_t g = 0; g < p.groups.size(); ++g) size[g] = p.groups[g].atUnchecked(batch);
    }
    void emit(AllocatorEvent::Kind kind, int inst, bool elastic = false) {
        const auto& in = p.instances[static_cast<std::size_t>(inst)];
        out.events.push_back(
            AllocatorEvent{kind, static_cast<std::uint64_t>(inst) + idOffset,
                           kind == AllocatorEvent::Kind::Alloc ? size[static_cast<std::size_t>(in.group)] : 0,
                           0, static_cast<int>(in.component), elastic});
    }
    bool skipSetup = false; ///< the steady step after a first step: its set-up instances exist already

    void step(std::size_t s) {
        const auto& st = p.steps[s];
        for (int a : st.allocs) emit(AllocatorEvent::Kind::Alloc, a);
        for (int t : st.transients) emit(AllocatorEvent::Kind::Alloc, t);
        // cuDNN's workspace: allocated after the op's outputs, freed when its kernel is queued
        // (run_conv_plan)
        for (int w : st.workspaces) {
            emit(AllocatorEvent::Kind::Alloc, w, true);
            out.events.back().size = std::min(out.events.back().size, workspaceCap);
            emit(AllocatorEvent::Kind::Free, w);
        }
        // Freed last first: C++ destroys an op's locals in reverse order, and CPython's list_dealloc drops a
        // foreach result list from its last item (Objects/listobject.c).
        for (auto t = st.transients.rbegin(); t != st.transients.rend(); ++t)
            emit(AllocatorEvent::Kind::Free, *t);
        for (int f : st.frees)
            if (!skipSetup || !p.setupInstance[static_cast<std::size_t>(f)])
                emit(AllocatorEvent::Kind::Free, f);
    }
    std::size_t last() const { return out.events.empty() ? 0 : out.events.size() - 1; }
};

// One more steady step of `program` at `batch` (its set-up exists already), with ids from `offset`: each
// such step frees what it allocates. `ends` gets the last event index of each of its program steps.
// Returns the next free id.
std::uint64_t emitSteadyStep(const StepProgram& program, std::int64_t batch, std::vector<std::uint64_t>& size,
                             std::uint64_t offset, StepEvents& out, std::vector<std::size_t>& ends,
                             std::uint64_t cap) {
    Emitter e{program, size, offset, out, cap};
    e.sizes(batch);
    e.skipSetup = true;
    ends.push_back(e.last());
    for (std::size_t s = 1; s < program.steps.size(); ++s) {
        e.step(s);
        ends.push_back(e.last());
    }
    return offset + program.instances.size();
}

} // namespace

void buildStepEvents(const StepProgram& p, std::int64_t batch, StepEvents& out, std::uint64_t workspaceCap) {
    const std::uint64_t cap = std::min(workspaceCap, p.config().cudnnWorkspaceCapBytes.value_or(UINT64_MAX));
    out.events.clear();
    out.stepEnd.assign(p.steps.size(), 0);
    out.warmEnd.clear();
    out.earlierEnd.clear();
    out.lastEnd.clear();
    out.lastBatch = p.lastBatch(batch);
    out.iterations = p.replayIterations(batch);
    if (p.steps.empty()) return;
    thread_local std::vector<std::uint64_t> size, warmSize, earlierSize, lastSize;
    Emitter steady{p, size, 0, out, cap};
    steady.sizes(batch);
    if (const StepProgram* w = p.warmup(); w && out.iterations >= 2) {
        // A first step (its set-up without optimizer states, which its step() creates and keeps), then the
        // steady-state step on the cache it left. The steady step's own set-up is what the first step made.
        Emitter first{*w, warmSize, 0, out, cap};
        first.sizes(batch);
        for (std::size_t s = 0; s < w->steps.size(); ++s) {
            first.step(s);
            out.warmEnd.push_back(first.last());
        }
        // Earlier steady steps at other sequence lengths, then the epoch's last, smaller batch.
        std::uint64_t offset = w->instances.size();
        for (const auto& earlier : p.earlierSteps())
            offset =
                emitSteadyStep(*earlier, batch, earlierSize, offset, out, out.earlierEnd.emplace_back(), cap);
        if (out.lastBatch > 0)
            offset = emitSteadyStep(p, out.lastBatch, lastSize, offset, out, out.lastEnd, cap);
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
