#pragma once
// --lm-loss trl-fused / trl-chunked: a language model's head and loss become one layer
// (ops/rules_lm_loss.cpp).
#include "batchfit/model.h"
#include "batchfit/result.h"
#include "batchfit/training_config.h"

namespace batchfit {

/// The model as the loss setting runs it: unchanged for LmLoss::Full; otherwise its final
/// lm_head (linear) -> [soft-cap: scale, tanh, scale] -> [cast to float32] -> cross_entropy layers replaced
/// by one trl_fused_lm_loss or trl_chunked_lm_loss layer named as the head (so freezing, tying and paths
/// still name it). An error when the model does not end that way or the set-up is one the rule does not
/// model.
Result<Model> applyLmLoss(const Model& model, const TrainingConfig& config);

} // namespace batchfit
