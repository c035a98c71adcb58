#pragma once
// One rule per op type: shape, parameters, what autograd saves, workspace, aliasing.
#include "batchfit/attributes.h"
#include "batchfit/result.h"
#include "batchfit/training_config.h"
#include "graph/graph.h"
#include "graph/tensor_info.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace batchfit {

class GraphBuilder;

/// How autocast treats the op (PyTorch's autocast op lists).
enum class PrecisionClass {
    Lower,   ///< runs in half under autocast (matmul, conv, linear)
    Fp32,    ///< runs in fp32 under autocast (softmax, norms, losses)
    Promote, ///< widest input dtype (elementwise, activations)
};

enum class Alias { None, View, InPlace };

struct ParamDecl {
    /// A tensor several layers use (a model-wide causal mask buffer): Provide declares it (and becomes the
    /// one later users get), Use takes the latest one provided under the same key, or declares it when none
    /// was.
    enum class Share { None, Provide, Use };
    ParamDecl(std::string n, Shape s, bool isBuffer = false, std::optional<DType> dt = std::nullopt,
              Share sh = Share::None)
        : name(std::move(n)), shape(std::move(s)), buffer(isBuffer), dtype(dt), share(sh) {}
    std::string name; ///< "weight", "bias", "running_mean"
    Shape shape;
    bool buffer = false;
    std::optional<DType> dtype;    ///< default: the parameter dtype of the precision
    Share share = Share::None;     ///< keyed by name
    std::uint64_t storedBytes = 0; ///< > 0: a packed (quantized) weight of this many bytes; never trains
};

struct SavedDecl {
    enum class Kind { Input, Output, Param, Created, Target } kind;
    int index = 0;
    int ifGrad =
        -1; ///< >= 0: saved only if input `ifGrad` requires a gradient (autograd saves what it needs)
    int ifParam = -1; ///< >= 0: saved only if parameter `ifParam` trains (a frozen weight needs no grad)
    /// How many autograd nodes of the op save it (SavedVariables): what saved-tensor hooks see, and what
    /// activation offload copies to the host, once each. 0: kept as a ctx attribute, no hook sees it.
    int packs = 1;
};

/// What a primitive op does, given its (already cast) inputs.
struct OpPlan {
    std::vector<TensorInfo> outputs;
    std::vector<ParamDecl> params;
    std::vector<TensorInfo> created; ///< masks, statistics, indices
    std::vector<std::string> createdRoles;
    std::vector<SavedDecl> saved;
    Alias alias = Alias::None; ///< output 0 shares input 0's storage
    GradKind grad = GradKind::Allocate;
    /// >= 0: only the first gradInputs inputs get a gradient here (an input passed along only to be kept
    /// alive, as the chunked loss's final hidden states, gets its gradient through another op)
    int gradInputs = -1;
    bool passthroughSameShape = false; ///< inputs with the output's shape get the output gradient itself
    /// >= 0: this created tensor is the gradient of input 0 / of the first parameter, made in the forward and
    /// saved (Liger's fused linear cross-entropy): the backward hands it on instead of allocating one
    int inputGradCreated = -1;
    int weightGradCreated = -1;
    Affine fwdWorkspace;
    Affine bwdWorkspace;
    /// Added to bwdWorkspace when the op's first parameter trains (a weight-gradient buffer the op keeps only
    /// then: TRL's fused head accumulates the weight's gradient in fp32)
    Affine bwdParamWorkspace;
    /// A transient after the backward's own (bwdWorkspace freed), beside the input's gradient: what the
    /// view and index functions that follow the op in autograd allocate (TRL's fused head: IndexBackward's
    /// zeros for the unscored rows).
    Affine bwdTail;
    /// cuDNN's workspaces, elastic (forward, grad of the input, grad of the weight): docs/memory-model.md 6.2.
    Affine cudnnWorkspace[3];
    bool isLoss = false;
    std::optional<TensorInfo> target;  ///< losses: the targets that come with the batch
    bool needsContiguous = false;      ///< non-contiguous inputs are copied first (like reshape in matmul)
    std::optional<std::string> tiedTo; ///< weight shared with this layer path's weight
};

struct OpContext {
    const std::string& path;
    const Attributes& attrs;
    std::vector<TensorInfo> inputs;
    DType paramDtype;                      ///< dtype of new parameters
    DType computeDtype;                    ///< dtype for floating outputs that are not derived from an input
    TorchRules torch = TorchRules::Torch2; ///< whose autograd formulas (2.x, or 1.13 where they differ)
    std::string gpuArch{};                 ///< TrainingConfig::gpuArch (SDPA's kernel choice)
    std::optional<DType> autocast{};       ///< autocast's half dtype when autocast is on

    Error fail(const std::string& msg) const { return makeError(path + ": " + msg); }
    /// A failure about one attribute's value (Error::attribute names it, so an editor can show it at the
    /// field).
    Error failAttribute(const std::string& key, const std::string& msg) const;
    std::string in(int i = 0) const { return shapeToString(inputs[static_cast<std::size_t>(i)].shape); }
    /// Required positive integer attribute.
    Result<std::int64_t> positive(const std::string& key) const;
    /// Optional integer with default and minimum.
    Result<std::int64_t> integer(const std::string& key, std::int64_t def, std::int64_t min) const;
    /// A shape attribute ("mask_shape": [1, 1, 128, 128]): nullopt when absent, an error unless it is a
    /// non-empty list of positive integers (each at most 2^32).
    Result<std::optional<Shape>> shapeList(const std::string& key) const;
    double real(const std::string& key, double def) const { return attrs.getDouble(key).value_or(def); }
    bool flag(const std::string& key, bool def) const { return attrs.getBool(key).value_or(def); }
};

class OpRule {
public:
    virtual ~OpRule() = default;
    virtual PrecisionClass precision() const { return PrecisionClass::Promote; }
    virtual int minInputs() const { return 1; }
    virtual int maxInputs() const { return 1; }
    /// Composite ops expand into primitives through the builder; primitives return false.
    virtual bool composite() const { return false; }
    virtual Result<OpPlan> plan(const OpContext& ctx) const = 0;
    /// For composites: adds primitive ops, returns the output tensor.
    virtual Result<int> expand(GraphBuilder&, const std::string&, const Attributes&,
                               const std::vector<int>&) const {
        return makeError("not a composite op");
    }
};

/// The rule for an op type, or nullptr.
const OpRule* findOpRule(const std::string& type);
/// All public op types (catalogue order), for messages and the UI.
std::vector<std::string> opTypes();
/// True for the op types a model file may use (not the internal ones composites expand into).
bool isPublicOpType(const std::string& type);

// Registration, one function per family (ops/*.cpp).
void registerLinearOps();
void registerConvOps();
void registerNormOps();
void registerActivationOps();
void registerPoolOps();
void registerShapeOps();
void registerElementwiseOps();
void registerEmbeddingOps();
void registerLossOps();
void registerLmLossOps();
void registerAttentionOps();
void registerMoeOps();
void registerMoeGroupedOps();
void registerMlaOps();
void registerMoeRouterOps();
void registerOpaqueOps();
void registerPointwiseOps();
void registerSdpaOps();
void registerQuantLinearOps();
void registerDoraOps();
void registerParallelOps();
void addOpRule(const std::string& type, std::unique_ptr<OpRule> rule, bool internal = false);

} // namespace batchfit
