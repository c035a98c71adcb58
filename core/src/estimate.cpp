#include "batchfit/estimate.h"

namespace batchfit {

std::string componentName(Component c) {
    switch (c) {
    case Component::Parameters:
        return "parameters";
    case Component::Gradients:
        return "gradients";
    case Component::OptimizerStates:
        return "optimizer_states";
    case Component::Activations:
        return "activations";
    case Component::Temporaries:
        return "temporaries";
    }
    return "?";
}

std::string phaseName(Phase p) {
    switch (p) {
    case Phase::Setup:
        return "setup";
    case Phase::Forward:
        return "forward";
    case Phase::Backward:
        return "backward";
    case Phase::OptimizerStep:
        return "optimizer_step";
    }
    return "?";
}

std::uint64_t ComponentBytes::total() const {
    std::uint64_t t = 0;
    for (auto b : bytes) t += b;
    return t;
}

} // namespace batchfit
