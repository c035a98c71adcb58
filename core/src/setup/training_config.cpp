#include "batchfit/training_config.h"

#include "enum_names.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <utility>

namespace batchfit {
namespace {

constexpr std::array<std::pair<std::string_view, OptimizerKind>, 12> kOptimizers{{
    {"sgd", OptimizerKind::Sgd},
    {"sgd-momentum", OptimizerKind::SgdMomentum},
    {"sgd-nesterov", OptimizerKind::SgdNesterov},
    {"adam", OptimizerKind::Adam},
    {"adamw", OptimizerKind::AdamW},
    {"rmsprop", OptimizerKind::RmsProp},
    {"adagrad", OptimizerKind::Adagrad},
    {"adafactor", OptimizerKind::Adafactor},
    {"lion", OptimizerKind::Lion},
    {"adam8bit", OptimizerKind::Adam8bit},
    {"paged-adamw", OptimizerKind::PagedAdamW},
    {"paged-adamw-8bit", OptimizerKind::PagedAdamW8bit},
}};
constexpr std::array<std::pair<std::string_view, QuantKind>, 4> kQuant{{
    {"none", QuantKind::None},
    {"nf4", QuantKind::Nf4},
    {"fp4", QuantKind::Fp4},
    {"int8", QuantKind::Int8},
}};
constexpr std::array<std::pair<std::string_view, OptimizerImpl>, 4> kImpls{
    {{"for-loop", OptimizerImpl::ForLoop},
     {"foreach", OptimizerImpl::Foreach},
     {"fused", OptimizerImpl::Fused},
     {"default", OptimizerImpl::Default}}};
constexpr std::array<std::pair<std::string_view, Precision>, 7> kPrecisions{{
    {"fp32", Precision::Fp32},
    {"amp-fp16", Precision::AmpFp16},
    {"amp-bf16", Precision::AmpBf16},
    {"pure-fp16", Precision::PureFp16},
    {"pure-bf16", Precision::PureBf16},
    {"mixed-fp16", Precision::MixedFp16Master},
    {"mixed-bf16", Precision::MixedBf16Master},
}};
constexpr std::array<std::pair<std::string_view, Checkpointing>, 4> kCheckpointing{{
    {"none", Checkpointing::None},
    {"every-block", Checkpointing::EveryBlock},
    {"every-k", Checkpointing::EveryKthBlock},
    {"selective", Checkpointing::Selective},
}};

constexpr std::array<std::pair<std::string_view, LmLoss>, 5> kLmLosses{{
    {"full", LmLoss::Full},
    {"trl-fused", LmLoss::TrlFused},
    {"trl-chunked", LmLoss::TrlChunked},
    {"liger", LmLoss::Liger},
    {"transformers", LmLoss::Full},
}};

constexpr std::array<std::pair<std::string_view, ActivationOffload>, 4> kActivationOffloads{{
    {"off", ActivationOffload::Off},
    {"all", ActivationOffload::All},
    {"all-pinned", ActivationOffload::AllPinned},
    {"checkpoints", ActivationOffload::Checkpoints},
}};

constexpr std::array<std::pair<std::string_view, Recipe>, 3> kRecipes{{
    {"sft", Recipe::Sft},
    {"dpo", Recipe::Dpo},
    {"grpo", Recipe::Grpo},
}};

constexpr std::array<std::pair<std::string_view, RefLogps>, 3> kRefLogps{{
    {"live", RefLogps::Live},
    {"precomputed", RefLogps::Precomputed},
    {"none", RefLogps::None},
}};

constexpr std::array<std::pair<std::string_view, Generation>, 3> kGenerations{{
    {"transformers", Generation::Transformers},
    {"vllm-colocate", Generation::VllmColocate},
    {"vllm-server", Generation::VllmServer},
}};

constexpr std::array<std::pair<std::string_view, CheckpointMode>, 2> kCheckpointModes{{
    {"reentrant", CheckpointMode::Reentrant},
    {"non-reentrant", CheckpointMode::NonReentrant},
}};

constexpr std::array<std::pair<std::string_view, TorchRules>, 3> kTorch{{
    {"2", TorchRules::Torch2},
    {"1.13", TorchRules::Torch113},
    {"2.x", TorchRules::Torch2},
}};

} // namespace

std::string_view checkpointModeName(CheckpointMode m) {
    return nameFrom(kCheckpointModes, m);
}
Result<CheckpointMode> parseCheckpointMode(std::string_view s) {
    return parseFrom(kCheckpointModes, s, "checkpoint mode");
}

std::string_view lmLossName(LmLoss l) {
    return nameFrom(kLmLosses, l);
}
Result<LmLoss> parseLmLoss(std::string_view s) {
    return parseFrom(kLmLosses, s, "language-model loss");
}

std::string_view activationOffloadName(ActivationOffload o) {
    return nameFrom(kActivationOffloads, o);
}
Result<ActivationOffload> parseActivationOffload(std::string_view s) {
    return parseFrom(kActivationOffloads, s, "activation offload");
}

std::string_view recipeName(Recipe r) {
    return nameFrom(kRecipes, r);
}
Result<Recipe> parseRecipe(std::string_view s) {
    return parseFrom(kRecipes, s, "recipe");
}

std::string_view refLogpsName(RefLogps r) {
    return nameFrom(kRefLogps, r);
}
Result<RefLogps> parseRefLogps(std::string_view s) {
    return parseFrom(kRefLogps, s, "reference log-probabilities");
}

std::string_view generationName(Generation g) {
    return nameFrom(kGenerations, g);
}
Result<Generation> parseGeneration(std::string_view s) {
    return parseFrom(kGenerations, s, "generation");
}

std::string_view torchRulesName(TorchRules t) {
    return nameFrom(kTorch, t);
}
Result<TorchRules> parseTorchRules(std::string_view s) {
    return parseFrom(kTorch, s, "PyTorch version");
}

std::string_view optimizerName(OptimizerKind k) {
    return nameFrom(kOptimizers, k);
}
std::string_view optimizerImplName(OptimizerImpl i) {
    return nameFrom(kImpls, i);
}
std::string_view precisionName(Precision p) {
    return nameFrom(kPrecisions, p);
}
std::string_view checkpointingName(Checkpointing c) {
    return nameFrom(kCheckpointing, c);
}
Result<OptimizerKind> parseOptimizer(std::string_view s) {
    return parseFrom(kOptimizers, s, "optimizer");
}
Result<OptimizerImpl> parseOptimizerImpl(std::string_view s) {
    return parseFrom(kImpls, s, "optimizer implementation");
}
OptimizerImpl resolvedImpl(const TrainingConfig& c) {
    if (c.impl != OptimizerImpl::Default) return c.impl;
    if (c.torch == TorchRules::Torch113) return OptimizerImpl::ForLoop;
    switch (c.optimizer) {
    case OptimizerKind::Sgd:
    case OptimizerKind::SgdMomentum:
    case OptimizerKind::SgdNesterov:
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW:
    case OptimizerKind::RmsProp:
    case OptimizerKind::Adagrad:
        return OptimizerImpl::Foreach;
    case OptimizerKind::Adafactor: // Hugging Face's, a loop over parameters
    case OptimizerKind::Lion:      // lion-pytorch's reference implementation, a loop
    case OptimizerKind::Adam8bit:  // bitsandbytes' own kernels
    case OptimizerKind::PagedAdamW:
    case OptimizerKind::PagedAdamW8bit:
        return OptimizerImpl::ForLoop;
    }
    return OptimizerImpl::ForLoop;
}

std::string optimizerImplLabel(const TrainingConfig& c) {
    const std::string name(optimizerImplName(resolvedImpl(c)));
    return c.impl == OptimizerImpl::Default ? "default: " + name : name;
}

Result<Precision> parsePrecision(std::string_view s) {
    return parseFrom(kPrecisions, s, "precision");
}
Result<Checkpointing> parseCheckpointing(std::string_view s) {
    return parseFrom(kCheckpointing, s, "checkpointing mode");
}

std::string_view quantKindName(QuantKind k) {
    return nameFrom(kQuant, k);
}
Result<QuantKind> parseQuantKind(std::string_view s) {
    return parseFrom(kQuant, s, "quantization");
}
bool isPagedOptimizer(OptimizerKind k) {
    return k == OptimizerKind::PagedAdamW || k == OptimizerKind::PagedAdamW8bit;
}
void applyQuantDefaults(TrainingConfig& c, bool checkpointingGiven) {
    // peft/utils/other.py prepare_model_for_kbit_training(use_gradient_checkpointing=True) calls
    // model.gradient_checkpointing_enable(), whose use_reentrant is True unless told otherwise.
    if (!c.quant.enabled() || !c.quant.prepare || checkpointingGiven) return;
    c.checkpointing = Checkpointing::EveryBlock;
    c.checkpointMode = CheckpointMode::Reentrant;
}

Result<std::optional<std::int64_t>> parseEpochSamples(std::string_view text) {
    std::string digits;
    for (char ch : text)
        if (ch != ' ' && ch != '\t' && ch != ',' && ch != '_' && ch != '\'') digits += ch;
    if (digits.empty()) return std::optional<std::int64_t>{};
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || end != digits.data() + digits.size() || v < 1 || v > kMaxEpochSamples)
        return makeError("expected a number of samples from 1 to 10^15, got '" + std::string(text) + "'");
    return std::optional<std::int64_t>{v};
}

Result<std::vector<std::int64_t>> parseReplaySequences(std::string_view text) {
    std::vector<std::int64_t> out;
    const auto bad = [&] {
        return makeError("expected comma-separated sequence lengths, got '" + std::string(text) + "'");
    };
    const auto blank = [](char ch) { return ch == ' ' || ch == '\t'; };
    if (std::all_of(text.begin(), text.end(), blank)) return out;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        std::string_view item = text.substr(start, comma - start);
        while (!item.empty() && blank(item.front())) item.remove_prefix(1);
        while (!item.empty() && blank(item.back())) item.remove_suffix(1);
        std::int64_t v = 0;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
        if (item.empty() || ec != std::errc() || end != item.data() + item.size()) return bad();
        if (v < 1 || v > (std::int64_t{1} << 24))
            return makeError("sequence length " + std::string(item) + " is out of range 1..16777216");
        out.push_back(v);
        if (out.size() > kMaxReplaySequences)
            return makeError("at most " + std::to_string(kMaxReplaySequences) + " sequence lengths");
        if (comma == text.size()) break;
        start = comma + 1;
    }
    return out;
}

std::string replaySequencesText(const std::vector<std::int64_t>& seqs) {
    std::string out;
    for (std::int64_t s : seqs) out += (out.empty() ? "" : ",") + std::to_string(s);
    return out;
}

std::vector<OptimizerKind> allOptimizers() {
    std::vector<OptimizerKind> out;
    for (const auto& p : kOptimizers) out.push_back(p.second);
    return out;
}

std::vector<Precision> allPrecisions() {
    std::vector<Precision> out;
    for (const auto& p : kPrecisions) out.push_back(p.second);
    return out;
}

} // namespace batchfit
