#include "program/step_program.h"

#include "batchfit/checked.h"
#include "batchfit/fit_map.h"
#include "graph/graph_builder.h"
#include "program/allocator_events.h"
#include "program/scheduler.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>

namespace batchfit {

bool StepProgram::perPair() {
    // DPO's batch counts pairs, run as a chosen and a rejected sequence each: every per-sample size is two
    // sequences' (the graph is built per sequence)
    auto twice = [](Affine& a) {
        if (a.perSample > kMaxBytes / 2) return false;
        a.perSample *= 2;
        return true;
    };
    bool ok = true;
    for (auto& i : instances) ok = twice(i.bytes) && ok;
    for (auto& l : layers) ok = twice(l.saved) && twice(l.output) && ok;
    ok = twice(m_totals.savedActivations) && twice(m_totals.autocastCopies) && ok;
    for (auto& h : m_totals.hostPacked) ok = twice(h) && ok;
    return ok;
}

namespace {

/// What GRPO is modelled with (docs/memory-model.md, "GRPO").
Status checkGrpo(const Model& model, const TrainingConfig& c) {
    if (c.refLogps == RefLogps::Precomputed)
        return makeError("--recipe grpo: the reference's log-probabilities are computed for each generation "
                         "batch (--ref-logps live, beta > 0) or not at all (--ref-logps none, beta = 0.0)");
    auto seq = modelSequenceLength(model);
    if (!seq) return makeError("--recipe grpo needs a language model: " + seq.error().message);
    if (c.promptTokens < 1 || c.promptTokens >= *seq)
        return makeError("--recipe grpo: --prompt-len gives the prompt's tokens, 1 .. " +
                         std::to_string(*seq - 1) + " of the model's " + std::to_string(*seq) +
                         " (the completion, max_completion_length, is the rest), got " +
                         std::to_string(c.promptTokens));
    if (c.generation == Generation::VllmColocate && c.gpuBytes == 0)
        return makeError("--generation vllm-colocate takes its share of a GPU: give the GPU");
    return Ok{};
}

/// What DPO and GRPO are modelled with (docs/memory-model.md, "Preference training", "GRPO").
Status checkRecipe(const Model& model, const TrainingConfig& c) {
    if (c.recipe == Recipe::Sft) return Ok{};
    const std::string what = "--recipe " + std::string(recipeName(c.recipe));
    if (c.lmLoss == LmLoss::TrlChunked || c.lmLoss == LmLoss::Liger)
        return makeError(what +
                         ": TRL's trainer takes its log-probabilities from TRL's fused head "
                         "(--lm-loss trl-fused, which it implies); --lm-loss " +
                         std::string(lmLossName(c.lmLoss)) + " is not what it runs");
    if (c.parallel.pp > 1 || shardsParameters(c.parallel.strategy))
        return makeError(what + " is not modelled with pipeline parallelism or sharded parameters (ZeRO-3, "
                                "FSDP): the forwards without gradients would gather them too");
    if (c.activationOffload == ActivationOffload::All || c.activationOffload == ActivationOffload::AllPinned)
        return makeError(what + " is not modelled with --activation-offload all: the forwards without "
                                "gradients run outside save_on_cpu");
    if (c.recipe == Recipe::Grpo) return checkGrpo(model, c);
    if (c.refLogps == RefLogps::None)
        return makeError("--recipe dpo needs the reference's log-probabilities: --ref-logps live or "
                         "precomputed");
    if (c.generation != Generation::Transformers) return makeError("--generation applies to --recipe grpo");
    if (c.stepsPerGeneration != 0 || c.numIterations != 1)
        return makeError("--steps-per-generation and --num-iterations apply to --recipe grpo");
    return Ok{};
}

} // namespace

Result<std::shared_ptr<const StepProgram>>
StepProgram::lower(const Model& model, const TrainingConfig& config, std::uint64_t cudaContextBytes) {
    return lowerProgram(model, config, cudaContextBytes, true);
}

Result<std::shared_ptr<const StepProgram>> StepProgram::lowerProgram(const Model& model,
                                                                     const TrainingConfig& config,
                                                                     std::uint64_t cudaContextBytes,
                                                                     bool withEarlierSteps) {
    if (config.recipe == Recipe::Grpo && config.promptTokens == 0) {
        // GRPO without --prompt-len: TRL's default max_completion_length (512) after the prompt
        if (auto seq = modelSequenceLength(model); seq && *seq >= 2) {
            TrainingConfig resolved = config;
            resolved.promptTokens = *seq - std::min<std::int64_t>(kGrpoDefaultCompletion, *seq - 1);
            return lowerProgram(model, resolved, cudaContextBytes, withEarlierSteps);
        }
    }
    if (config.accumulationSteps < 1 || config.accumulationSteps > 1'000'000)
        return makeError("gradient accumulation steps must be between 1 and 1000000, got " +
                         std::to_string(config.accumulationSteps));
    if (config.checkpointEvery < 1) return makeError("checkpoint every k blocks: k must be at least 1");
    if (config.activationOffload == ActivationOffload::Checkpoints &&
        config.checkpointing == Checkpointing::None)
        return makeError(
            "activation offload \"checkpoints\" moves each checkpointed layer's input to the host: "
            "it needs checkpointing (every-block, every-k or selective)");
    if (config.paramOffload && !shardsParameters(config.parallel.strategy))
        return makeError("parameter offload moves each GPU's parameter shards to the host: it needs a strategy "
                         "that shards parameters (--strategy zero3, fsdp, fsdp-grad-op, hsdp or fsdp2; one GPU "
                         "is enough)");
    if (config.activationOffload != ActivationOffload::Off && config.parallel.pp > 1)
        return makeError("activation offload is not modelled with pipeline parallelism (--pp): the "
                         "micro-batches in flight would hold their saved tensors on the host");
    if (auto st = checkRecipe(model, config); !st) return st.error();
    if (!(config.marginFraction >= 0 && config.marginFraction < 1))
        return makeError("safety margin must be in [0, 1)");
    if (config.fragmentationFraction &&
        !(*config.fragmentationFraction >= 0 && *config.fragmentationFraction <= 1))
        return makeError("fragmentation reserve must be in [0, 1]");
    auto allocConf = parseAllocConf(config.allocConf);
    if (!allocConf) return allocConf.error();
    // required() adds the context to at most ~2^63 of reserved bytes: keep the sum below 2^64.
    if (config.cudaContextBytes.value_or(cudaContextBytes) > kMaxBytes)
        return makeError("CUDA context of " +
                         std::to_string(config.cudaContextBytes.value_or(cudaContextBytes)) +
                         " bytes is too large (at most 2^62)");
    auto graph = buildGraph(model, config);
    if (!graph) return graph.error();
    auto program = std::make_shared<StepProgram>();
    program->m_config = config;
    program->m_allocConfig = *allocConf;
    program->m_nonTorch = nonTorchMemory(model, config, cudaContextBytes);
    program->m_contextBytes = program->m_nonTorch.total();
    Scheduler scheduler(*graph, config, *program);
    auto st = scheduler.run();
    if (!st) return st.error();
    if (config.recipe == Recipe::Dpo && !program->perPair())
        return makeError(model.name + ": --recipe dpo: the per-sample sizes are too large to double");
    program->finalize();
    program->m_repeatable = stepIsRepeatable(*program);
    if (withEarlierSteps && config.epochSamples)
        if (auto st = program->checkEpochSamples(); !st) return st.error();
    if (withEarlierSteps && !config.replaySequences.empty()) {
        if (auto st = program->lowerEarlierSteps(model, config, cudaContextBytes); !st) return st.error();
    } else if (withEarlierSteps && !config.firstStep && !config.fragmentationFraction &&
               program->m_repeatable) {
        // The replay's first iteration: states appear in the first step(), between cached activation blocks.
        TrainingConfig first = config;
        first.firstStep = true;
        auto warm = lowerProgram(model, first, cudaContextBytes, false);
        if (warm) program->m_warmup = std::move(*warm);
    }
    if (program->m_maxSafeBatch < 1)
        return makeError(model.name + ": the model is too large to estimate (bytes overflow)");
    return std::shared_ptr<const StepProgram>(program);
}

// TrainingConfig::replaySequences: the first step and the steady steps before the one estimated, each the
// model lowered at its own sequence length.
Status StepProgram::lowerEarlierSteps(const Model& model, const TrainingConfig& config,
                                      std::uint64_t cudaContextBytes) {
    const auto& seqs = config.replaySequences;
    const std::string what = "replay sequence lengths";
    if (config.fragmentationFraction)
        return makeError(what + " need the allocator replay: they cannot go with a fragmentation_fraction "
                                "override");
    if (config.firstStep)
        return makeError(what + " are the steps before a steady-state step: they cannot go with first_step");
    if (seqs.size() > kMaxReplaySequences)
        return makeError(what + ": " + std::to_string(seqs.size()) + " given, at most " +
                         std::to_string(kMaxReplaySequences));
    auto own = modelSequenceLength(model);
    if (!own) return makeError(what + " need a token-sequence model: " + own.error().message);
    if (!m_repeatable)
        return makeError(what + ": this step keeps tensors past its end, so it is replayed once");
    TrainingConfig base = config;
    base.replaySequences.clear();
    m_sequence = *own;
    for (std::size_t i = 0; i < seqs.size(); ++i) {
        const std::string at = "replay sequence length " + std::to_string(seqs[i]);
        if (seqs[i] < 1 || seqs[i] > *own)
            return makeError(at + ": expected 1 .. the model's own length, " + std::to_string(*own) +
                             " (the step estimated is the longest)");
        auto m = withSequenceLength(model, seqs[i]);
        if (!m) return makeError(at + ": " + m.error().message);
        TrainingConfig c = base;
        c.firstStep = i == 0;
        auto p = lowerProgram(*m, c, cudaContextBytes, false);
        if (!p) return makeError(at + ": " + p.error().message);
        if (i > 0 && !(*p)->m_repeatable) return makeError(at + ": the step keeps tensors past its end");
        m_maxSafeBatch = std::min(m_maxSafeBatch, (*p)->m_maxSafeBatch);
        if (i == 0)
            m_warmup = std::move(*p);
        else
            m_earlier.push_back(std::move(*p));
    }
    return Ok{};
}

// TrainingConfig::epochSamples: the epoch's last batch is one more steady step in the replay, at its own
// batch.
Status StepProgram::checkEpochSamples() const {
    const auto& c = m_config;
    const std::string what = "samples per epoch (" + std::to_string(*c.epochSamples) + ")";
    if (*c.epochSamples < 1 || *c.epochSamples > kMaxEpochSamples)
        return makeError(what + ": expected 1 .. 10^15 samples");
    if (c.fragmentationFraction)
        return makeError(what + " need the allocator replay: they cannot go with a fragmentation_fraction "
                                "override");
    if (c.firstStep)
        return makeError(what + ": the last batch comes after steady-state steps, not with first_step");
    if (c.accumulationSteps > 1)
        return makeError(what + " with gradient accumulation: the epoch's last optimizer step mixes full and "
                                "smaller micro-batches, which the replay does not model yet");
    if (c.parallel.pp > 1)
        return makeError(what +
                         " with pipeline parallelism: the last batch's micro-batches are not modelled");
    if (!m_repeatable)
        return makeError(what + ": this step keeps tensors past its end, so it is replayed once");
    return Ok{};
}

std::int64_t StepProgram::lastBatch(std::int64_t batch) const {
    if (!m_config.epochSamples || batch < 1 || !warmsUp()) return 0;
    const std::int64_t replicas = m_config.parallel.enabled() ? m_config.parallel.dataParallel() : 1;
    const std::int64_t perGpu = (*m_config.epochSamples + replicas - 1) / replicas; // DistributedSampler pads
    if (perGpu <= batch) return 0; // one batch per epoch: estimated at the full batch
    return perGpu % batch;
}

void StepProgram::finalize() {
    setupInstance.assign(instances.size(), 0);
    if (!steps.empty())
        for (int a : steps[0].allocs) setupInstance[static_cast<std::size_t>(a)] = 1;
    std::map<std::pair<std::uint64_t, std::uint64_t>, int> index;
    groups.clear();
    long double c = 0, k = 0;
    for (auto& in : instances) {
        auto key = std::make_pair(in.bytes.constant, in.bytes.perSample);
        auto it = index.find(key);
        if (it == index.end()) {
            it = index.emplace(key, static_cast<int>(groups.size())).first;
            groups.push_back(in.bytes);
        }
        in.group = it->second;
        c += static_cast<long double>(in.bytes.constant) + 512;
        k += static_cast<long double>(in.bytes.perSample);
    }
    const long double room = static_cast<long double>(kMaxBytes) - c;
    if (room <= 0)
        m_maxSafeBatch = 0;
    else if (k == 0)
        m_maxSafeBatch = kMaxBatch;
    else
        m_maxSafeBatch =
            static_cast<std::int64_t>(std::min<long double>(room / k, static_cast<long double>(kMaxBatch)));
}

std::optional<std::uint64_t> StepProgram::peak(std::int64_t batch) const {
    if (batch < 1 || batch > m_maxSafeBatch) return std::nullopt;
    thread_local std::vector<std::uint64_t> size;
    size.resize(groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g) size[g] = roundAllocation(groups[g].atUnchecked(batch));
    std::uint64_t live = 0, best = 0;
    for (const auto& st : steps) {
        for (int a : st.allocs)
            live += size[static_cast<std::size_t>(instances[static_cast<std::size_t>(a)].group)];
        std::uint64_t now = live;
        for (int t : st.transients)
            now += size[static_cast<std::size_t>(instances[static_cast<std::size_t>(t)].group)];
        best = std::max(best, now);
        for (int f : st.frees)
            live -= size[static_cast<std::size_t>(instances[static_cast<std::size_t>(f)].group)];
    }
    return best;
}

std::optional<ComponentBytes> StepProgram::peakComponents(std::int64_t batch) const {
    if (batch < 1 || batch > m_maxSafeBatch) return std::nullopt;
    thread_local std::vector<std::uint64_t> size;
    size.resize(groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g) size[g] = roundAllocation(groups[g].atUnchecked(batch));
    ComponentBytes live, best;
    std::uint64_t bestTotal = 0;
    for (const auto& st : steps) {
        for (int a : st.allocs) {
            const auto& in = instances[static_cast<std::size_t>(a)];
            live[in.component] += size[static_cast<std::size_t>(in.group)];
        }
        ComponentBytes now = live;
        for (int t : st.transients) {
            const auto& in = instances[static_cast<std::size_t>(t)];
            now[in.component] += size[static_cast<std::size_t>(in.group)];
        }
        if (now.total() > bestTotal) {
            bestTotal = now.total();
            best = now;
        }
        for (int f : st.frees) {
            const auto& in = instances[static_cast<std::size_t>(f)];
            live[in.component] -= size[static_cast<std::size_t>(in.group)];
        }
    }
    return best;
}

std::uint64_t StepProgram::required(std::uint64_t peakBytes) const {
    constexpr std::uint64_t kSegment = 2u << 20; // reserved memory grows in 2 MiB steps
    const auto reserve = static_cast<std::uint64_t>(
        std::ceil(static_cast<double>(peakBytes) * m_config.fragmentationFraction.value_or(0)));
    const std::uint64_t reserved = (peakBytes + reserve + kSegment - 1) / kSegment * kSegment;
    return reserved + m_contextBytes;
}

bool StepProgram::warmsUp() const {
    return !m_config.firstStep && m_repeatable && m_warmup;
}

int StepProgram::replayIterations(std::int64_t batch) const {
    if (!warmsUp()) return 1;
    return 2 + static_cast<int>(m_earlier.size()) + (lastBatch(batch) > 0 ? 1 : 0);
}

Result<ReplayResult> StepProgram::replay(std::int64_t batch, std::optional<std::uint64_t> limit, bool samples,
                                         std::optional<std::size_t> snapshotStep, std::uint64_t capacity,
                                         std::uint64_t workspaceCap) const {
    if (batch < 1 || batch > m_maxSafeBatch)
        return makeError("batch size " + std::to_string(batch) + " is out of range for the allocator replay");
    thread_local StepEvents ev;
    buildStepEvents(*this, batch, ev, workspaceCap);
    ReplayOptions o;
    o.config = m_allocConfig;
    o.limitBytes = limit;
    o.contextBytes = m_contextBytes;
    o.capacityBytes = capacity;
    if (samples) o.sampleAfter = ev.stepEnd;
    if (snapshotStep && *snapshotStep < ev.stepEnd.size()) o.snapshotAfter = ev.stepEnd[*snapshotStep];
    auto r = replayAllocations(ev.events, o);
    if (r && r->oom) locateOom(ev, *r->oom);
    return r;
}

bool StepProgram::hasWorkspaces() const {
    return std::any_of(steps.begin(), steps.end(),
                       [](const ProgramStep& st) { return !st.workspaces.empty(); });
}

std::uint64_t StepProgram::largestWorkspace(std::int64_t batch) const {
    std::uint64_t best = 0;
    for (const auto& st : steps)
        for (int w : st.workspaces)
            best = std::max(best, instances[static_cast<std::size_t>(w)].bytes.atUnchecked(batch));
    return std::min(best, m_config.cudnnWorkspaceCapBytes.value_or(UINT64_MAX));
}

// The program step an event belongs to: the first whose last event is at or after it.
void StepProgram::locateOom(const StepEvents& ev, OomReport& oom) const {
    const std::size_t i = oom.eventIndex;
    auto stepOf = [i](const std::vector<std::size_t>& ends) -> std::optional<std::size_t> {
        auto it = std::lower_bound(ends.begin(), ends.end(), i);
        if (it == ends.end()) return std::nullopt;
        return static_cast<std::size_t>(it - ends.begin());
    };
    const StepProgram* w = warmup();
    const bool mixed = !m_config.replaySequences.empty();
    if (!ev.warmEnd.empty() && w && i <= ev.warmEnd.back()) {
        oom.firstIteration = true;
        oom.step = stepOf(ev.warmEnd);
        if (oom.step) oom.stepLabel = w->steps[*oom.step].label;
        if (mixed) oom.sequence = m_config.replaySequences.front();
        return;
    }
    for (std::size_t k = 0; k < ev.earlierEnd.size() && k < m_earlier.size(); ++k) {
        if (ev.earlierEnd[k].empty() || i > ev.earlierEnd[k].back()) continue;
        oom.step = stepOf(ev.earlierEnd[k]);
        if (oom.step) oom.stepLabel = m_earlier[k]->steps[*oom.step].label;
        oom.sequence = m_config.replaySequences[k + 1];
        return;
    }
    // The epoch's last batch runs after the earlier steps, before the step estimated.
    if (!ev.lastEnd.empty() && i <= ev.lastEnd.back()) {
        oom.step = stepOf(ev.lastEnd);
        if (oom.step) oom.stepLabel = steps[*oom.step].label;
        oom.lastBatch = ev.lastBatch;
        if (mixed) oom.sequence = m_sequence;
        return;
    }
    oom.step = stepOf(ev.stepEnd);
    if (oom.step) oom.stepLabel = steps[*oom.step].label;
    if (mixed) oom.sequence = m_sequence;
}

std::optional<std::uint64_t> StepProgram::requiredAt(std::int64_t batch) const {
    if (!replays()) {
        auto p = peak(batch);
        if (!p) return std::nullopt;
        return required(*p);
    }
    auto r = replay(batch, std::nullopt);
    if (!r || r->oom) return std::nullopt;
    return r->stats.peakReservedBytes + m_contextBytes;
}

Result<Estimate> StepProgram::evaluate(std::int64_t batch, bool withTimeline) const {
    if (batch < 1) return makeError("batch size must be at least 1, got " + std::to_string(batch));
    if (batch > kMaxBatch)
        return makeError("batch size " + std::to_string(batch) + " is larger than the maximum " +
                         std::to_string(kMaxBatch));
    if (batch > m_maxSafeBatch)
        return makeError(
            "batch size " + std::to_string(batch) + " is too large for this model: its memory would exceed " +
            "2^62 bytes (the largest batch BatchFit can count is " + std::to_string(m_maxSafeBatch) + ")");
    std::vector<std::uint64_t> size(groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g) size[g] = roundAllocation(groups[g].atUnchecked(batch));
    auto sz = [&](int inst) {
        return size[static_cast<std::size_t>(instances[static_cast<std::size_t>(inst)].group)];
    };
    auto comp = [&](int inst) { return instances[static_cast<std::size_t>(inst)].component; };

    Estimate e;
    e.batch = batch;
    ComponentBytes live;
    std::size_t peakStep = 0;
    for (std::size_t s = 0; s < steps.size(); ++s) {
        const auto& st = steps[s];
        for (int a : st.allocs) live[comp(a)] += sz(a);
        ComponentBytes now = live;
        for (int t : st.transients) now[comp(t)] += sz(t);
        if (now.total() > e.peakAllocatedBytes || s == 0) {
            e.peakAllocatedBytes = now.total();
            e.atPeak = now;
            peakStep = s;
        }
        if (withTimeline) e.timeline.push_back(TimelinePoint{st.phase, st.label, now});
        for (int f : st.frees) live[comp(f)] -= sz(f);
    }
    e.peakPhase = steps[peakStep].phase;
    e.peakLabel = steps[peakStep].label;
    e.peakOpPath = steps[peakStep].opPath;
    const auto& t = m_totals;
    e.parameterCount = t.parameterCount;
    e.trainableParameterCount = t.trainableParameterCount;
    e.parameterBytes = t.parameterBytes;
    e.bufferBytes = t.bufferBytes;
    e.gradientBytes = t.gradientBytes;
    e.optimizerStateBytes = t.optimizerStateBytes;
    e.hostBytes = t.hostBytes;
    e.hostParameterBytes = t.hostParameterBytes;
    e.referenceModelBytes = t.referenceBytes;
    e.parameterTransferBytes =
        checkedMul(t.paramTransferBytes, static_cast<std::uint64_t>(m_config.accumulationSteps))
            .value_or(UINT64_MAX);
    e.pagedStateBytes = t.pagedStateBytes;
    e.parallel.bucketBytes = t.bucketBytes;
    e.parallel.group = t.parallelGroup;
    e.parallel.gpus = t.parallelGpus;
    e.parallel.gpusOnNode = std::max<std::int64_t>(
        1, std::min<std::int64_t>(t.parallelGpus, static_cast<std::int64_t>(m_config.parallel.gpusPerNode)));
    e.parallel.rank = t.parallelRank;
    e.parallel.largestGatheredBytes = t.largestUnitBytes;
    e.parallel.largestGatheredUnit = t.largestUnit;
    e.quantizedParameterCount = t.quantizedParameterCount;
    e.quantizedParameterBytes = t.quantizedBytes;
    e.savedActivationBytes = t.savedActivations.atUnchecked(batch);
    e.generationCacheBytes = t.generationCache.atUnchecked(batch);
    e.promptTokens = m_config.promptTokens;
    std::uint64_t packedBytes = 0;
    for (const Affine& packed : t.hostPacked) {
        const std::uint64_t b = packed.atUnchecked(batch); // each below 2^62 up to maxSafeBatch()
        packedBytes = checkedAdd(packedBytes, b).value_or(UINT64_MAX);
        // pinned: CachingHostAllocator::allocate rounds each block up to a power of two (PowerOf2Ceil)
        e.hostActivationBytes =
            checkedAdd(e.hostActivationBytes, t.hostPinned ? std::bit_ceil(b) : b).value_or(UINT64_MAX);
    }
    e.activationTransferBytes =
        checkedMul(packedBytes, 2 * static_cast<std::uint64_t>(m_config.accumulationSteps))
            .value_or(UINT64_MAX);
    e.autocastWeightCopyBytes = t.autocastCopies.atUnchecked(batch);
    e.cudaContextBytes = m_contextBytes;
    e.nonTorch = m_nonTorch;
    e.allocator.allocConf = allocConfText(m_allocConfig);
    if (!m_config.replaySequences.empty()) {
        e.allocator.sequences = m_config.replaySequences;
        e.allocator.sequences.push_back(m_sequence);
    }
    if (replays()) {
        auto r = replay(batch, std::nullopt, withTimeline);
        if (!r) return r.error();
        if (r->oom) return makeError("batch size " + std::to_string(batch) + ": " + r->oom->message);
        const auto& st = r->stats;
        e.allocator.simulated = true;
        e.allocator.peakAllocatedBytes = st.peakAllocatedBytes;
        e.allocator.peakReservedBytes = st.peakReservedBytes;
        e.allocator.peakInactiveSplitBytes = st.peakInactiveSplitBytes;
        e.allocator.peakSegments = st.peakSegments;
        e.allocator.deviceAllocs = st.deviceAllocs;
        e.allocator.iterations = replayIterations(batch);
        e.allocator.lastBatch = lastBatch(batch);
        e.reservedBytes = std::max(st.peakReservedBytes, e.peakAllocatedBytes);
        if (hasWorkspaces()) {
            e.allocator.largestWorkspaceBytes = largestWorkspace(batch);
            auto least = replay(batch, std::nullopt, false, {}, 0, 0); // every workspace fallen back
            if (least && !least->oom) e.allocator.leastReservedBytes = least->stats.peakReservedBytes;
        }
        e.requiredBytes = e.reservedBytes + m_contextBytes;
        for (std::size_t i = 0; i < e.timeline.size() && i < r->samples.size(); ++i)
            e.timeline[i].reservedBytes = r->samples[i].reservedBytes;
    } else {
        e.requiredBytes = required(e.peakAllocatedBytes);
        e.reservedBytes = e.requiredBytes - m_contextBytes;
        e.allocator.peakReservedBytes = e.reservedBytes;
        for (auto& tp : e.timeline) tp.reservedBytes = e.reservedBytes;
    }
    e.allocatorReserveBytes = e.reservedBytes - e.peakAllocatedBytes;
    for (const auto& l : layers) {
        LayerActivation la;
        la.path = l.path;
        la.op = l.op;
        la.savedBytes = l.saved.atUnchecked(batch);
        la.outputBytes = l.output.atUnchecked(batch);
        la.outputShape = l.outputShape;
        la.outputBatched = l.outputBatched;
        la.outputDType = l.outputDType;
        la.parameterCount = l.parameterCount;
        la.trainableParameterCount = l.trainableParameterCount;
        la.shareOfPeak = e.peakAllocatedBytes
                             ? static_cast<double>(la.savedBytes) / static_cast<double>(e.peakAllocatedBytes)
                             : 0;
        e.layers.push_back(std::move(la));
    }
    return e;
}

} // namespace batchfit
