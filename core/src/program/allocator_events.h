#pragma once
// The step program as the caching allocator sees it: every instance's alloc and free, in program order, at
// one batch size. The steady state is replayed as a training loop reaches it: the program's first-step twin
// (set-up without optimizer states, then a step whose step() creates them), then the steady-state step on the
// cache that leaves. A first step (or a program whose later steps keep new tensors alive) is replayed once.
#include "batchfit/allocator_replay.h"
#include "program/step_program.h"

#include <cstdint>
#include <vector>

namespace batchfit {

struct StepEvents {
    std::vector<AllocatorEvent> events;
    /// Per program step: the index of its last event in the last iteration (the allocator's state "after
    /// the step"); steps with no events repeat the index before them.
    std::vector<std::size_t> stepEnd;
    /// With a warm-up first iteration: the index of the last event of each of its steps (else empty).
    std::vector<std::size_t> warmEnd;
    /// With earlier steady steps (StepProgram::earlierSteps): per step, the last event index of each of its
    /// program steps.
    std::vector<std::vector<std::size_t>> earlierEnd;
    /// With an epoch's last batch (StepProgram::lastBatch): its size and the last event index of each of its
    /// program steps (else 0 and empty). It runs after the earlier steps, before the step estimated.
    std::int64_t lastBatch = 0;
    std::vector<std::size_t> lastEnd;
    int iterations = 1;
};

/// The events at `batch` (1 <= batch <= maxSafeBatch). Ids are instance indices; tags are Components. cuDNN
/// workspaces are capped at `workspaceCap` bytes each (0: none asked for, the least a step needs).
void buildStepEvents(const StepProgram& program, std::int64_t batch, StepEvents& out,
                     std::uint64_t workspaceCap = UINT64_MAX);

/// True when every instance allocated after the set-up step is freed again within the step.
bool stepIsRepeatable(const StepProgram& program);

} // namespace batchfit
