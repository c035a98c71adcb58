#include "gui/panels/training_panel.h"

#include "gui/estimation/byte_format.h"
#include "gui/panels/alloc_conf_field.h"
#include "gui/panels/lora_editor.h"
#include "gui/panels/parallel_editor.h"
#include "gui/panels/setting_spin_box.h"

#include <QAbstractProxyModel>
#include <QCheckBox>
#include <QComboBox>
#include <QCompleter>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QToolButton>

namespace batchfit {

namespace {

constexpr int kMergeEvery = 102;
constexpr int kMergeAccumulation = 103;
constexpr int kMergeMargin = 104;
constexpr int kMergeContext = 105;
constexpr std::uint64_t kMiB = 1024u * 1024u;

QLabel* buddyLabel(const QString& text, QWidget* buddy) {
    auto* label = new QLabel(text, buddy->parentWidget());
    label->setBuddy(buddy);
    return label;
}

template <class Enum> void selectData(QComboBox* box, Enum value) {
    box->setCurrentIndex(box->findData(static_cast<int>(value)));
}

template <class Enum> Enum dataOf(const QComboBox* box) {
    return static_cast<Enum>(box->currentData().toInt());
}

} // namespace

TrainingPanel::TrainingPanel(QWidget* parent) : QWidget(parent) {
    auto* form = new QFormLayout(this);
    m_form = form;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);

    m_gpu = new QComboBox(this);
    m_gpu->setToolTip(tr("The GPU to fit: its memory is the capacity line in the chart."));
    m_customGib = new SettingSpinBox("gpu_memory_bytes", this); // range and unit from the settings table
    m_customGib->setSettingValue(static_cast<std::int64_t>(customGpu(24.0).memoryBytes));
    m_customGib->setToolTip(tr("Capacity of a GPU that is not in the catalogue."));
    // the GPU count sits beside the GPU (data parallelism: ParallelEditor), so one GPU adds no row
    m_gpuRow = new QHBoxLayout;
    m_gpuRow->addWidget(m_gpu, 1);
    form->addRow(buddyLabel(tr("&GPU:"), m_gpu), m_gpuRow);
    form->addRow(buddyLabel(tr("C&ustom capacity:"), m_customGib), m_customGib);
    buildGpuList();
    setUpGpuSearch();

    m_optimizer = new QComboBox(this);
    for (auto k : allOptimizers()) m_optimizer->addItem(optimizerTitle(k), static_cast<int>(k));
    m_optimizer->setToolTip(
        tr("The optimizer decides how much state is kept per parameter: none for SGD, one "
           "buffer for momentum, two for Adam."));
    form->addRow(buddyLabel(tr("Optimi&zer:"), m_optimizer), m_optimizer);

    m_impl = new QComboBox(this);
    m_impl->addItem(QString(),
                    static_cast<int>(OptimizerImpl::Default)); // "default: foreach", updateEnabled()
    m_impl->addItem(tr("for-loop"), static_cast<int>(OptimizerImpl::ForLoop));
    m_impl->addItem(tr("foreach"), static_cast<int>(OptimizerImpl::Foreach));
    m_impl->addItem(tr("fused"), static_cast<int>(OptimizerImpl::Fused));
    m_impl->setToolTip(
        tr("PyTorch's optimizer implementation: foreach groups tensors and needs temporary copies "
           "during the step; for-loop needs them for one tensor at a time, fused almost none. The "
           "default is what torch picks on a GPU: foreach in 2.x, for-loop in 1.13."));
    m_amsgrad = new QCheckBox(tr("AMSGrad"), this);
    m_amsgrad->setToolTip(tr("Adam/AdamW keep a third state tensor (max_exp_avg_sq)."));
    auto* implRow = new QHBoxLayout;
    implRow->addWidget(m_impl, 1);
    implRow->addWidget(m_amsgrad);
    form->addRow(buddyLabel(tr("&Implementation:"), m_impl), implRow);

    m_precision = new QComboBox(this);
    for (auto p : allPrecisions()) m_precision->addItem(precisionTitle(p), static_cast<int>(p));
    m_precision->setToolTip(
        tr("Number format of weights and activations: autocast keeps fp32 weights and saves "
           "half-precision activations; pure half stores everything in 16 bits."));
    form->addRow(buddyLabel(tr("&Precision:"), m_precision), m_precision);

    m_checkpointing = new QComboBox(this);
    for (auto c : {Checkpointing::None, Checkpointing::EveryBlock, Checkpointing::EveryKthBlock,
                   Checkpointing::Selective})
        m_checkpointing->addItem(checkpointingTitle(c), static_cast<int>(c));
    m_checkpointing->setToolTip(
        tr("Gradient checkpointing drops activations inside blocks and recomputes them in "
           "the backward pass: less memory for about a third more compute."));
    m_checkpointEvery = new SettingSpinBox("checkpoint_every", this);
    m_checkpointEvery->setLabelPrefix(tr("k = "));
    m_checkpointEvery->setToolTip(tr("With every k-th block: checkpoint one block in k."));
    m_checkpointMode = new QComboBox(this);
    m_checkpointMode->setObjectName(QStringLiteral("checkpointModeBox"));
    m_checkpointMode->addItem(tr("reentrant"), static_cast<int>(CheckpointMode::Reentrant));
    m_checkpointMode->addItem(tr("non-reentrant"), static_cast<int>(CheckpointMode::NonReentrant));
    m_checkpointMode->setToolTip(
        tr("torch.utils.checkpoint's use_reentrant. Reentrant (the default in torch 2.6 and Hugging Face) "
           "keeps each recomputed block's output until the block's backward ends; non-reentrant "
           "(use_reentrant=False, recommended by PyTorch) stops recomputing after the last tensor the "
           "backward needs."));
    auto* ckptRow = new QHBoxLayout;
    ckptRow->addWidget(m_checkpointing, 1);
    ckptRow->addWidget(m_checkpointEvery);
    form->addRow(buddyLabel(tr("&Checkpointing:"), m_checkpointing), ckptRow);
    form->addRow(tr("Checkpoint mode:"), m_checkpointMode); // no Alt+letter left that reads well

    m_lmLoss = new QComboBox(this);
    m_lmLoss->setObjectName(QStringLiteral("lmLossBox"));
    m_lmLoss->addItem(tr("full logits (transformers)"), static_cast<int>(LmLoss::Full));
    m_lmLoss->addItem(tr("TRL fused head (TRL 1.15+)"), static_cast<int>(LmLoss::TrlFused));
    m_lmLoss->addItem(tr("TRL chunked (TRL 1.9-1.14)"), static_cast<int>(LmLoss::TrlChunked));
    m_lmLoss->addItem(tr("Liger fused cross-entropy"), static_cast<int>(LmLoss::Liger));
    m_lmLoss->setToolTip(
        tr("How a language model's head and loss run. Full: transformers' loss over the whole "
           "[tokens x vocabulary] logits, upcast to fp32. TRL's SFTTrainer never makes those logits: "
           "since TRL 1.15 a fused head folds them in tiles; TRL 1.9 to 1.14 computed them 256 tokens at a "
           "time, checkpointed. Liger's fused linear cross-entropy (use_liger_kernel) computes the head's "
           "gradients in the forward, in chunks. At long context the logits are often the peak."));

    // one box for the recipe and, for DPO, where the reference log-probabilities come from (two settings)
    m_recipe = new QComboBox(this);
    m_recipe->setObjectName(QStringLiteral("recipeBox"));
    m_recipe->addItem(tr("SFT"), 0);
    m_recipe->addItem(tr("DPO"), 1);
    m_recipe->addItem(tr("DPO, ref. precomputed"), 2);
    m_recipe->addItem(tr("GRPO"), 3);
    m_recipe->addItem(tr("GRPO, with reference (beta > 0)"), 4);
    m_recipe->setToolTip(tr(
        "What a step trains on: SFT (supervised fine-tuning), DPO or GRPO. DPO (TRL's DPOTrainer): the batch "
        "counts chosen/rejected pairs, run as "
        "twice as many sequences, with log-probabilities from TRL's fused head; after the policy's forward "
        "a reference forward runs without gradients, on the base model under LoRA, else on a frozen copy "
        "of the model kept on the GPU. Precomputed (precompute_ref_log_probs=True) computes the reference "
        "once before training: neither the forward nor the copy is in the step. GRPO (TRL's GRPOTrainer): "
        "the batch counts completions; transformers' generate() makes batch x accumulation of them before "
        "the first micro-batch, its KV cache on this GPU; with beta > 0 the reference's log-probabilities "
        "follow. DPO and GRPO always run TRL's fused head: under GRPO the box beside gives the prompt's "
        "tokens (the completion is the rest of the sequence)."));
    m_promptTokens = new SettingSpinBox("prompt_tokens", this);
    m_promptTokens->setLabelPrefix(tr("prompt "));
    m_promptTokens->setSpecialValueText(tr("prompt: TRL's default")); // 0: all but 512 completion tokens
    m_promptTokens->setToolTip(tr("GRPO: the prompt's tokens; the completion (max_completion_length) is the "
                                  "rest of the model's sequence. 0: TRL's default max_completion_length, 512 "
                                  "tokens, after the prompt."));
    // one row for both: a row more would give the panel a scroll bar at 1280x720
    auto* lossRow = new QHBoxLayout;
    lossRow->addWidget(m_recipe, 1);
    lossRow->addWidget(m_lmLoss, 1);
    lossRow->addWidget(m_promptTokens, 1);
    form->addRow(tr("Recipe, LM loss:"), lossRow);

    m_activationOffload = new QComboBox(this);
    m_activationOffload->setObjectName(QStringLiteral("activationOffloadBox"));
    m_activationOffload->addItem(tr("off"), static_cast<int>(ActivationOffload::Off));
    m_activationOffload->addItem(tr("checkpoint inputs (transformers)"),
                                 static_cast<int>(ActivationOffload::Checkpoints));
    m_activationOffload->addItem(tr("all saved (save_on_cpu)"),
                                 static_cast<int>(ActivationOffload::All));
    m_activationOffload->addItem(tr("all saved, pinned (save_on_cpu)"),
                                 static_cast<int>(ActivationOffload::AllPinned));
    m_activationOffload->setToolTip(
        tr("Where the tensors saved for the backward wait: on the GPU, or in host memory, copied back when "
           "their backward runs. transformers 5 (activation_checkpointing_kwargs offload=True) moves each "
           "checkpointed layer's input to pinned host memory; torch's save_on_cpu around the forward moves "
           "every saved tensor, the weights too. The GPU figure drops; host memory and PCIe copies are "
           "shown beside it."));
    form->addRow(tr("Activation offload:"), m_activationOffload);

    m_accumulation = new SettingSpinBox("accumulation_steps", this);
    m_accumulation->setToolTip(tr("Micro-batches per optimizer step. The batch size is the micro-batch: "
                                  "accumulation does not change the memory of one step."));
    form->addRow(buddyLabel(tr("Gradient &accumulation:"), m_accumulation), m_accumulation);

    m_margin = new SettingSpinBox("margin_fraction", this);
    m_margin->setToolTip(tr("Capacity kept free for safety (other processes, allocator spikes): a batch fits "
                            "only below the dashed line."));
    form->addRow(buddyLabel(tr("Safety margin:"), m_margin), m_margin);

    m_contextOverride = new QCheckBox(tr("Override"), this);
    m_contextOverride->setToolTip(
        tr("Memory outside PyTorch's allocator: the CUDA context, cuBLAS and cuDNN kernels, NCCL buffers. "
           "By default BatchFit adds them up for this GPU and step (see the breakdown's tooltip). Your own "
           "figure replaces all of them. To measure it, after one training step: free, total = "
           "torch.cuda.mem_get_info(); the figure is total - free - torch.cuda.memory_reserved() (with no "
           "other process on the GPU)."));
    m_contextMib = new SettingSpinBox("cuda_context_bytes", this);
    m_contextMib->setSettingValue(std::int64_t{512} * static_cast<std::int64_t>(kMiB));
    m_contextMib->setToolTip(m_contextOverride->toolTip());
    auto* ctxRow = new QHBoxLayout;
    ctxRow->addWidget(m_contextOverride);
    ctxRow->addWidget(m_contextMib, 1);
    form->addRow(buddyLabel(tr("CUDA conte&xt:"), m_contextOverride), ctxRow);
    m_torch = new QComboBox(this);
    m_torch->setObjectName(QStringLiteral("torchRulesBox"));
    m_torch->addItem(tr("2.x (default)"), static_cast<int>(TorchRules::Torch2));
    m_torch->addItem(QStringLiteral("1.13"), static_cast<int>(TorchRules::Torch113));
    m_torch->setToolTip(
        tr("Whose autograd formulas decide what a step saves. PyTorch 1.13 kept a little more "
           "(e.g. the input of a mean over dims or a global average pool)."));
    // The allocator's options fold out beside it; the choice may narrow so that the row does not widen the
    // set-up (at 1280 x 720 the dock is as narrow as its rows allow).
    m_torch->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_torch->setMinimumContentsLength(8);
    auto* torchRow = new QHBoxLayout;
    torchRow->addWidget(m_torch, 1);
    form->addRow(tr("PyTorch:"), torchRow);
    m_allocConf = new AllocConfField(form, torchRow, this);
    connect(m_allocConf, &AllocConfField::allocConfEdited, this, [this](const QString& canonical) {
        m_config.allocConf = canonical.toStdString();
        emitEdit(canonical.isEmpty() ? tr("Allocator settings: PyTorch's defaults")
                                     : tr("Allocator settings: %1").arg(canonical));
    });
    connect(
        m_allocConf, &AllocConfField::replaySequencesEdited, this,
        [this](const std::vector<std::int64_t>& seqs) {
            m_config.replaySequences = seqs;
            emitEdit(
                seqs.empty()
                    ? tr("Earlier batch lengths: none")
                    : tr("Earlier batch lengths: %1").arg(QString::fromStdString(replaySequencesText(seqs))));
        });
    connect(m_allocConf, &AllocConfField::epochSamplesEdited, this, [this](std::optional<std::int64_t> n) {
        m_config.epochSamples = n;
        emitEdit(n ? tr("Samples per epoch: %1").arg(*n) : tr("Samples per epoch: not set"));
    });

    m_setToNone = new QCheckBox(tr("zero_grad(set_to_none=True)"), this);
    m_setToNone->setToolTip(
        tr("Free the gradients between steps (PyTorch's default). Unchecked, gradients stay "
           "allocated during the next forward pass."));
    m_offload = new QCheckBox(tr("Offload optimizer states to CPU"), this);
    m_offload->setToolTip(
        tr("Optimizer states and master weights live in host memory (DeepSpeed/FSDP style)."));
    m_paramOffload = new QCheckBox(tr("Offload parameter shards to CPU (ZeRO-3 / FSDP)"), this);
    m_paramOffload->setObjectName(QStringLiteral("paramOffloadBox"));
    m_paramOffload->setToolTip(
        tr("DeepSpeed ZeRO-3 offload_param (ZeRO-Infinity) or FSDP CPUOffload(offload_params=True): each "
           "GPU's parameter and gradient shards live in host memory and the optimizer steps there; a block's "
           "parameters come to the GPU only while it runs. Needs a strategy that shards parameters (one "
           "GPU is enough)."));
    m_eagerLoading = new QCheckBox(tr("Eager CUDA module loading"), this);
    m_eagerLoading->setToolTip(
        tr("CUDA_MODULE_LOADING=EAGER, or torch older than 1.13, or CUDA older than 11.7: every kernel "
           "image loads at start-up, about 900 MiB more outside PyTorch's allocator. Newer stacks load "
           "kernels lazily (the default)."));
    m_firstStep = new QCheckBox(tr("Simulate the first step"), this);
    m_firstStep->setToolTip(
        tr("Step 1 creates the optimizer states inside optimizer.step(); later steps start "
           "with them allocated (the default)."));
    form->addRow(m_setToNone);
    form->addRow(m_offload);
    form->addRow(m_paramOffload);
    form->addRow(m_eagerLoading);
    form->addRow(m_firstStep);
    m_lora = new LoraEditor(form, this);
    connect(
        m_lora, &LoraEditor::fineTuningEdited, this,
        [this](const LoraConfig& l, const QuantConfig& q, const QString& what, int mergeId, bool quantOn) {
            m_config.lora = l;
            m_config.quant = q;
            // prepare_model_for_kbit_training turns checkpointing on, unless it was set already
            if (quantOn) applyQuantDefaults(m_config, m_config.checkpointing != Checkpointing::None);
            emitEdit(what, mergeId);
        });

    m_parallel = new ParallelEditor(form, m_gpuRow, this);
    connect(m_parallel, &ParallelEditor::parallelEdited, this,
            [this](const ParallelConfig& p, const QString& what, int mergeId) {
                m_config.parallel = p;
                emitEdit(what, mergeId);
            });

    for (QComboBox* box : {m_gpu, m_optimizer, m_impl, m_precision, m_checkpointing, m_checkpointMode,
                           m_lmLoss, m_recipe, m_activationOffload}) {
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(10);
    }
    for (QComboBox* box : {m_recipe, m_lmLoss}) box->setMinimumContentsLength(4); // they share a row
    // Tab follows the panel top to bottom: the GPU count sits beside the GPU.
    setTabOrder(m_gpu, m_parallel->countField());
    setTabOrder(m_parallel->countField(), m_customGib);
    setTabOrder(m_customGib, m_optimizer);
    setTabOrder(m_optimizer, m_impl);
    setTabOrder(m_impl, m_amsgrad);
    setTabOrder(m_amsgrad, m_precision);
    setTabOrder(m_precision, m_checkpointing);
    setTabOrder(m_checkpointing, m_checkpointEvery);
    setTabOrder(m_checkpointEvery, m_checkpointMode);
    setTabOrder(m_checkpointMode, m_recipe);
    setTabOrder(m_recipe, m_lmLoss);
    setTabOrder(m_lmLoss, m_promptTokens);
    setTabOrder(m_lmLoss, m_activationOffload);
    setTabOrder(m_activationOffload, m_accumulation);
    setTabOrder(m_accumulation, m_margin);
    setTabOrder(m_margin, m_contextOverride);
    setTabOrder(m_contextOverride, m_contextMib);
    setTabOrder(m_contextMib, m_torch);
    setTabOrder(m_torch, m_allocConf->advancedButton());
    setTabOrder(m_allocConf->advancedButton(), m_allocConf->lineEdit());
    setTabOrder(m_allocConf->lineEdit(), m_allocConf->sequencesEdit());
    setTabOrder(m_allocConf->sequencesEdit(), m_allocConf->epochEdit());
    setTabOrder(m_allocConf->epochEdit(), m_setToNone);
    setTabOrder(m_setToNone, m_offload);
    setTabOrder(m_offload, m_paramOffload);
    setTabOrder(m_paramOffload, m_eagerLoading);
    setTabOrder(m_eagerLoading, m_firstStep);
    setTabOrder(m_firstStep, m_lora->firstField());
    setTabOrder(m_lora->lastField(), m_parallel->firstField());

    connect(m_gpu, &QComboBox::currentIndexChanged, this, &TrainingPanel::onGpuChanged);
    connect(m_customGib, &SettingSpinBox::settingEdited, this, &TrainingPanel::onGpuChanged);
    connect(m_optimizer, &QComboBox::currentIndexChanged, this, [this] {
        m_config.optimizer = dataOf<OptimizerKind>(m_optimizer);
        emitEdit(tr("Optimizer: %1").arg(m_optimizer->currentText()));
    });
    connect(m_impl, &QComboBox::currentIndexChanged, this, [this] {
        m_config.impl = dataOf<OptimizerImpl>(m_impl);
        emitEdit(tr("Optimizer implementation: %1").arg(m_impl->currentText()));
    });
    connect(m_amsgrad, &QCheckBox::toggled, this, [this](bool on) {
        m_config.amsgrad = on;
        emitEdit(on ? tr("AMSGrad on") : tr("AMSGrad off"));
    });
    connect(m_precision, &QComboBox::currentIndexChanged, this, [this] {
        m_config.precision = dataOf<Precision>(m_precision);
        emitEdit(tr("Precision: %1").arg(m_precision->currentText()));
    });
    connect(m_checkpointing, &QComboBox::currentIndexChanged, this, [this] {
        m_config.checkpointing = dataOf<Checkpointing>(m_checkpointing);
        emitEdit(tr("Checkpointing: %1").arg(m_checkpointing->currentText()));
    });
    connect(m_checkpointMode, &QComboBox::currentIndexChanged, this, [this] {
        m_config.checkpointMode = dataOf<CheckpointMode>(m_checkpointMode);
        emitEdit(tr("Checkpoint mode: %1").arg(m_checkpointMode->currentText()));
    });
    connect(m_lmLoss, &QComboBox::currentIndexChanged, this, [this] {
        m_config.lmLoss = dataOf<LmLoss>(m_lmLoss);
        emitEdit(tr("LM loss: %1").arg(m_lmLoss->currentText()));
    });
    connect(m_recipe, &QComboBox::currentIndexChanged, this, [this] {
        const int r = m_recipe->currentData().toInt();
        m_config.recipe = r == 0 ? Recipe::Sft : r <= 2 ? Recipe::Dpo : Recipe::Grpo;
        m_config.refLogps = r == 2 ? RefLogps::Precomputed : r == 3 ? RefLogps::None : RefLogps::Live;
        showRecipe();
        emitEdit(tr("Recipe: %1").arg(m_recipe->currentText()));
    });
    connect(m_promptTokens, &SettingSpinBox::settingEdited, this, [this] {
        m_config.promptTokens = m_promptTokens->integer();
        emitEdit(tr("Prompt tokens: %1").arg(m_config.promptTokens), kMergeEvery);
    });
    connect(m_activationOffload, &QComboBox::currentIndexChanged, this, [this] {
        m_config.activationOffload = dataOf<ActivationOffload>(m_activationOffload);
        emitEdit(tr("Activation offload: %1").arg(m_activationOffload->currentText()));
    });
    // Only the user's edits reach m_config: a value set by setConfig() is held exactly by its box.
    connect(m_checkpointEvery, &SettingSpinBox::settingEdited, this, [this] {
        m_config.checkpointEvery = m_checkpointEvery->integer();
        emitEdit(tr("Checkpoint every %1 blocks").arg(m_config.checkpointEvery), kMergeEvery);
    });
    connect(m_accumulation, &SettingSpinBox::settingEdited, this, [this] {
        m_config.accumulationSteps = m_accumulation->integer();
        emitEdit(tr("Gradient accumulation: %1").arg(m_config.accumulationSteps), kMergeAccumulation);
    });
    connect(m_margin, &SettingSpinBox::settingEdited, this, [this] {
        m_config.marginFraction = m_margin->real();
        emitEdit(tr("Safety margin: %1%").arg(m_margin->value()), kMergeMargin);
    });
    auto contextEdited = [this] {
        if (m_updating) return;
        if (m_contextOverride->isChecked())
            m_config.cudaContextBytes = static_cast<std::uint64_t>(m_contextMib->integer());
        else
            m_config.cudaContextBytes.reset();
        emitEdit(tr("CUDA context"), kMergeContext);
    };
    connect(m_contextOverride, &QCheckBox::toggled, this, contextEdited);
    connect(m_contextMib, &SettingSpinBox::settingEdited, this, contextEdited);
    connect(m_setToNone, &QCheckBox::toggled, this, [this](bool on) {
        m_config.zeroGradSetToNone = on;
        emitEdit(tr("zero_grad(set_to_none)"));
    });
    connect(m_offload, &QCheckBox::toggled, this, [this](bool on) {
        m_config.optimizerOffload = on;
        emitEdit(on ? tr("Offload optimizer states") : tr("Keep optimizer states on the GPU"));
    });
    connect(m_paramOffload, &QCheckBox::toggled, this, [this](bool on) {
        m_config.paramOffload = on;
        emitEdit(on ? tr("Offload parameter shards") : tr("Keep parameter shards on the GPU"));
    });
    connect(m_torch, &QComboBox::currentIndexChanged, this, [this] {
        m_config.torch = dataOf<TorchRules>(m_torch);
        emitEdit(tr("PyTorch %1").arg(m_torch->currentText()));
    });
    connect(m_eagerLoading, &QCheckBox::toggled, this, [this](bool on) {
        m_config.eagerModuleLoading = on;
        emitEdit(on ? tr("Eager CUDA module loading") : tr("Lazy CUDA module loading"));
    });
    connect(m_firstStep, &QCheckBox::toggled, this, [this](bool on) {
        m_config.firstStep = on;
        emitEdit(on ? tr("Simulate the first step") : tr("Simulate a steady-state step"));
    });
    setConfig(m_config);
}

void TrainingPanel::setUpGpuSearch() {
    // Editable only to search: what is typed filters the catalogue (any part of the name, the id, the Chinese
    // name); choosing a match selects it, and text that matches nothing reverts to the GPU chosen.
    m_gpu->setEditable(true);
    m_gpu->setInsertPolicy(QComboBox::NoInsert);
    m_gpu->lineEdit()->setPlaceholderText(tr("Search GPUs…"));
    auto* completer = new QCompleter(m_gpu->model(), m_gpu);
    completer->setCompletionRole(kGpuSearchRole);
    completer->setFilterMode(Qt::MatchContains);
    completer->setCaseSensitivity(Qt::CaseInsensitive);
    completer->setCompletionMode(QCompleter::PopupCompletion);
    m_gpu->setCompleter(completer);
    connect(completer, qOverload<const QModelIndex&>(&QCompleter::activated), this,
            [this, completer](const QModelIndex& i) {
                auto* proxy = qobject_cast<QAbstractProxyModel*>(completer->completionModel());
                const QModelIndex source = proxy ? proxy->mapToSource(i) : QModelIndex();
                if (source.isValid() && (source.flags() & Qt::ItemIsEnabled))
                    m_gpu->setCurrentIndex(source.row());
                m_gpu->lineEdit()->setText(m_gpu->currentText());
            });
    connect(m_gpu->lineEdit(), &QLineEdit::editingFinished, this, [this] {
        if (m_gpu->lineEdit()->text() != m_gpu->currentText())
            m_gpu->lineEdit()->setText(m_gpu->currentText());
        m_gpu->lineEdit()->setCursorPosition(0);
    });
    // The start of the text is the model's name: show it whole, whatever the box's width ("RTX 4090
    // · 23.9…").
    connect(m_gpu, &QComboBox::currentIndexChanged, this,
            [this] { m_gpu->lineEdit()->setCursorPosition(0); });
    m_gpu->lineEdit()->setCursorPosition(0);
}

void TrainingPanel::setLoraTargetInfo(const LoraTargetInfo& info) {
    m_lora->setTargetInfo(info);
}

void TrainingPanel::setConfig(const TrainingConfig& config) {
    m_updating = true;
    m_config = config;
    selectData(m_optimizer, config.optimizer);
    selectData(m_impl, config.impl);
    m_amsgrad->setChecked(config.amsgrad);
    selectData(m_precision, config.precision);
    selectData(m_checkpointing, config.checkpointing);
    m_checkpointEvery->setSettingValue(static_cast<std::int64_t>(config.checkpointEvery));
    selectData(m_checkpointMode, config.checkpointMode);
    selectData(m_lmLoss, config.lmLoss);
    selectData(m_activationOffload, config.activationOffload);
    m_recipe->setCurrentIndex(config.recipe == Recipe::Sft    ? 0
                              : config.recipe == Recipe::Grpo ? (config.refLogps == RefLogps::Live ? 4 : 3)
                              : config.refLogps == RefLogps::Live ? 1
                                                                  : 2);
    m_promptTokens->setSettingValue(config.promptTokens);
    showRecipe();
    m_accumulation->setSettingValue(static_cast<std::int64_t>(config.accumulationSteps));
    m_margin->setSettingValue(config.marginFraction);
    m_contextOverride->setChecked(config.cudaContextBytes.has_value());
    if (config.cudaContextBytes)
        m_contextMib->setSettingValue(static_cast<std::int64_t>(*config.cudaContextBytes));
    m_setToNone->setChecked(config.zeroGradSetToNone);
    m_lora->setFineTuning(config.lora, config.quant);
    m_parallel->setParallel(config.parallel);
    m_offload->setChecked(config.optimizerOffload);
    m_paramOffload->setChecked(config.paramOffload);
    m_eagerLoading->setChecked(config.eagerModuleLoading);
    m_firstStep->setChecked(config.firstStep);
    selectData(m_torch, config.torch);
    m_allocConf->setAllocConf(QString::fromStdString(config.allocConf));
    m_allocConf->setReplaySequences(config.replaySequences);
    m_allocConf->setEpochSamples(config.epochSamples);
    m_updating = false;
    updateEnabled();
}

void TrainingPanel::setGpu(const GpuSpec& gpu) {
    m_updating = true;
    const int idx = m_gpu->findData(QString::fromStdString(gpu.id));
    if (idx >= 0 && gpu.id != customGpuId().toStdString()) {
        m_gpu->setCurrentIndex(idx);
    } else {
        m_gpu->setCurrentIndex(m_gpu->findData(customGpuId()));
        m_customGib->setSettingValue(static_cast<std::int64_t>(gpu.memoryBytes));
    }
    m_shownGpu = gpu; // exact: a custom GPU keeps its bytes and its architecture until the user edits
    m_gpu->lineEdit()->setCursorPosition(0);
    m_updating = false;
    updateEnabled();
}

GpuSpec TrainingPanel::currentGpu() const {
    const QString id = m_gpu->currentData().toString();
    if (id != customGpuId() && !id.isEmpty())
        if (auto g = findGpu(id.toStdString())) return *g;
    const auto bytes = static_cast<std::uint64_t>(m_customGib->integer());
    if (m_shownGpu.id == customGpuId().toStdString() && m_shownGpu.memoryBytes == bytes) return m_shownGpu;
    return customGpuOfBytes(bytes);
}

void TrainingPanel::onGpuChanged() {
    updateEnabled();
    if (m_updating) return;
    emit gpuEdited(currentGpu());
}

void TrainingPanel::emitEdit(const QString& what, int mergeId) {
    updateEnabled();
    if (m_updating) return;
    emit configEdited(m_config, what, mergeId);
}

void TrainingPanel::updateEnabled() {
    const bool adam = m_config.optimizer == OptimizerKind::Adam || m_config.optimizer == OptimizerKind::AdamW;
    m_amsgrad->setEnabled(adam);
    m_checkpointEvery->setEnabled(m_config.checkpointing == Checkpointing::EveryKthBlock);
    m_checkpointMode->setEnabled(m_config.checkpointing != Checkpointing::None);
    // shown only while checkpointing is on (as LoRA's rows): the form stays short enough for 1280 x 720
    m_form->setRowVisible(m_checkpointMode, m_config.checkpointing != Checkpointing::None);
    m_contextMib->setEnabled(m_contextOverride->isChecked());
    TrainingConfig asDefault = m_config;
    asDefault.impl = OptimizerImpl::Default;
    m_impl->setItemText(
        0, tr("default: %1")
               .arg(QString::fromStdString(std::string(optimizerImplName(resolvedImpl(asDefault))))));
    m_customGib->setEnabled(m_gpu->currentData().toString() == customGpuId());
}

void TrainingPanel::showRecipe() {
    // DPO and GRPO always run TRL's fused head; GRPO's prompt length takes the LM-loss box's place
    m_lmLoss->setEnabled(m_config.recipe == Recipe::Sft);
    m_lmLoss->setVisible(m_config.recipe != Recipe::Grpo);
    m_promptTokens->setVisible(m_config.recipe == Recipe::Grpo);
}

} // namespace batchfit
