#include "gui/panels/parallel_editor.h"

#include "gui/panels/setting_spin_box.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QToolButton>

namespace batchfit {

namespace {
constexpr int kMergeGpus = 401, kMergeBucket = 402, kMergeReduce = 403, kMergePerNode = 404, kMergeTp = 405;

QWidget* rowOf(QWidget* parent, std::initializer_list<QWidget*> widgets) {
    auto* row = new QWidget(parent);
    auto* h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    for (QWidget* w : widgets) {
        w->setParent(row);
        h->addWidget(w);
    }
    h->addStretch(1);
    return row;
}
} // namespace

QString ParallelEditor::strategyTitle(ParallelStrategy s) {
    switch (s) {
    case ParallelStrategy::None:
        return tr("one GPU");
    case ParallelStrategy::Ddp:
        return tr("DDP (replicas)");
    case ParallelStrategy::Zero1:
        return tr("ZeRO-1 (states sharded)");
    case ParallelStrategy::Zero2:
        return tr("ZeRO-2 (+ gradients)");
    case ParallelStrategy::Zero3:
        return tr("ZeRO-3 (+ parameters)");
    case ParallelStrategy::Fsdp:
        return tr("FSDP full shard");
    case ParallelStrategy::FsdpGradOp:
        return tr("FSDP SHARD_GRAD_OP");
    case ParallelStrategy::Hsdp:
        return tr("HSDP (shards within a node)");
    case ParallelStrategy::Fsdp2:
        return tr("FSDP2 (fully_shard)");
    }
    return {};
}

ParallelEditor::ParallelEditor(QFormLayout* form, QHBoxLayout* gpuRow, QWidget* parent)
    : QWidget(parent), m_form(form) {
    hide(); // a logic holder: its widgets live in the form
    // Ranges from the settings table (SettingSpinBox): a value a file holds is shown as it is, never clamped.
    m_gpus = new SettingSpinBox("parallel.gpus", parent);
    m_gpus->setObjectName(QStringLiteral("parallelGpus"));
    m_gpus->setLabelPrefix(tr("×"));
    m_gpus->setAccessibleName(tr("Number of GPUs"));
    m_gpus->setToolTip(tr("Data parallelism: the batch is the micro-batch per GPU, and the chart and verdict "
                          "are one GPU's (the most loaded)."));
    m_strategy = new QComboBox(parent);
    m_strategy->setObjectName(QStringLiteral("parallelStrategy"));
    for (ParallelStrategy s : allParallelStrategies())
        m_strategy->addItem(strategyTitle(s), static_cast<int>(s));
    m_strategy->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_strategy->setMinimumContentsLength(10);
    m_strategy->setToolTip(
        tr("What each GPU keeps: DDP a full replica (+ gradient buckets); ZeRO-1/2/3 shard "
           "optimizer states, gradients, parameters; FSDP gathers each block's parameters "
           "only while it runs."));
    m_advanced = new QToolButton(parent);
    m_advanced->setObjectName(QStringLiteral("parallelAdvanced"));
    m_advanced->setText(tr("Advanced"));
    m_advanced->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_advanced->setArrowType(Qt::RightArrow);
    m_advanced->setCheckable(true);
    m_advanced->setToolTip(tr("The framework settings that change memory: buckets, prefetching, resharding"));
    gpuRow->addWidget(m_gpus);
    m_strategyRow = new QWidget(parent);
    auto* h = new QHBoxLayout(m_strategyRow);
    h->setContentsMargins(0, 0, 0, 0);
    m_strategy->setParent(m_strategyRow);
    m_advanced->setParent(m_strategyRow);
    h->addWidget(m_strategy, 1);
    h->addWidget(m_advanced);
    form->addRow(tr("Parallelism:"), m_strategyRow);

    m_tp = new SettingSpinBox("parallel.tp");
    m_tp->setObjectName(QStringLiteral("parallelTp"));
    m_tp->setToolTip(
        tr("Megatron tensor parallelism: each layer's heads, MLP columns and the vocabulary split "
           "over this many of the GPUs; the data-parallel replicas are GPUs / this"));
    m_sequenceParallel = new QCheckBox(tr("Sequence parallel"));
    m_sequenceParallel->setObjectName(QStringLiteral("parallelSequence"));
    m_sequenceParallel->setToolTip(tr(
        "Megatron sequence parallelism (needs TP > 1): the norms, dropouts and residual stream are split "
        "over the tensor-parallel GPUs along the sequence; each linear keeps only its share of its input"));
    m_pp = new SettingSpinBox("parallel.pp");
    m_pp->setObjectName(QStringLiteral("parallelPp"));
    m_pp->setLabelPrefix(tr("PP ×"));
    m_pp->setToolTip(tr("Pipeline stages (1F1B): the first stage (the embedding and its share of the layers) "
                        "and the last (the head and the loss) are simulated, and the heavier is shown"));
    m_micro = new SettingSpinBox("parallel.microbatches");
    m_micro->setMinimum(0); // 0: unset, as many as stages
    m_micro->setSpecialValueText(tr("M = stages"));
    m_micro->setLabelPrefix(tr("M "));
    m_micro->setToolTip(tr("Micro-batches per step in the pipeline: the first stage keeps the activations of "
                           "min(M, stages) of them, the last one"));
    m_tp->setLabelPrefix(tr("TP ×"));
    m_tpRow = rowOf(parent, {m_tp, m_sequenceParallel, m_pp, m_micro});
    form->addRow(tr("Model parallel:"), m_tpRow);

    m_bucketCap = new SettingSpinBox("parallel.bucket_cap_mb");
    m_bucketCap->setSuffix(tr(" MiB buckets"));
    m_bucketCap->setToolTip(tr("DDP bucket_cap_mb (default 25): how gradients are grouped for all-reduce"));
    m_bucketView = new QCheckBox(tr("gradient_as_bucket_view"));
    m_bucketView->setToolTip(tr("Gradients are views into the buckets: saves one gradient-sized buffer"));
    m_ddpRow = rowOf(parent, {m_bucketCap, m_bucketView});
    form->addRow(tr("DDP:"), m_ddpRow);

    m_reduceBucket = new SettingSpinBox("parallel.reduce_bucket_size");
    m_reduceBucket->setDisplayUnit(1e6, 2, tr(" M elements"));
    m_reduceBucket->setToolTip(tr("DeepSpeed reduce_bucket_size (default 500 M elements): the reduce buffers "
                                  "are this size whatever the model"));
    m_overlap = new QComboBox;
    m_overlap->addItem(tr("overlap: default"), -1);
    m_overlap->addItem(tr("overlap on"), 1);
    m_overlap->addItem(tr("overlap off"), 0);
    m_overlap->setToolTip(tr("overlap_comm: two reduce buffers instead of one (DeepSpeed's default: on for "
                             "stage 3 only)"));
    m_zeroImpl = new QComboBox;
    m_zeroImpl->addItem(QStringLiteral("DeepSpeed"), static_cast<int>(ZeroImpl::DeepSpeed));
    m_zeroImpl->addItem(QStringLiteral("ZeroRedundancyOptimizer"), static_cast<int>(ZeroImpl::Torch));
    m_zeroImpl->setToolTip(tr("ZeRO-1 by DeepSpeed (flat partitions) or torch's ZeroRedundancyOptimizer over "
                              "DDP (whole tensors, greedy by size: ranks differ)"));
    m_zeroRow = rowOf(parent, {m_reduceBucket, m_overlap, m_zeroImpl});
    form->addRow(tr("ZeRO:"), m_zeroRow);

    m_perNode = new SettingSpinBox("parallel.gpus_per_node");
    m_perNode->setSuffix(tr(" per node"));
    m_perNode->setToolTip(tr("GPUs per node: HSDP shards within a node and replicates across nodes"));
    m_limitGathers = new QCheckBox(tr("limit all-gathers"));
    m_limitGathers->setToolTip(tr("limit_all_gathers (default on): at most two blocks gathered at a time"));
    m_prefetchPre = new QCheckBox(tr("prefetch pre"));
    m_prefetchPre->setToolTip(
        tr("BackwardPrefetch.BACKWARD_PRE (the default): the next block's parameters are "
           "gathered before the current block's gradients are reduced"));
    m_reshard = new QCheckBox(tr("reshard after forward"));
    m_reshard->setToolTip(tr("FSDP2 reshard_after_forward (default on); off keeps gathered parameters to the "
                             "backward, as SHARD_GRAD_OP"));
    m_fsdpRow = rowOf(parent, {m_perNode, m_limitGathers, m_prefetchPre, m_reshard});
    form->addRow(tr("FSDP:"), m_fsdpRow);

    connect(m_gpus, &SettingSpinBox::settingEdited, this, [this] {
        const std::int64_t n = m_gpus->integer();
        m_parallel.gpus = n;
        if (n > 1 && m_parallel.strategy == ParallelStrategy::None) {
            m_parallel.strategy = ParallelStrategy::Ddp;
            m_updating = true;
            m_strategy->setCurrentIndex(m_strategy->findData(static_cast<int>(ParallelStrategy::Ddp)));
            m_updating = false;
        }
        if (n == 1) m_parallel.strategy = ParallelStrategy::None;
        emitEdit(tr("%1 GPUs").arg(n), kMergeGpus);
    });
    connect(m_strategy, &QComboBox::currentIndexChanged, this, [this] {
        m_parallel.strategy = static_cast<ParallelStrategy>(m_strategy->currentData().toInt());
        // A set-up being shown is shown as it is (ZeRO-3 on one GPU: parameter offload); only the user's
        // choice of a strategy brings a second GPU count along
        if (m_updating) return;
        if (m_parallel.strategy != ParallelStrategy::None && m_parallel.gpus == 1) {
            m_parallel.gpus = 8;
            m_gpus->setSettingValue(std::int64_t{8});
        }
        if (m_parallel.strategy == ParallelStrategy::None) {
            m_parallel.gpus = 1;
            m_gpus->setSettingValue(std::int64_t{1});
        }
        emitEdit(tr("Parallelism: %1").arg(m_strategy->currentText()));
    });
    connect(m_advanced, &QToolButton::toggled, this, [this](bool on) {
        m_advanced->setArrowType(on ? Qt::DownArrow : Qt::RightArrow);
        updateVisible();
    });
    connect(m_tp, &SettingSpinBox::settingEdited, this, [this] {
        const std::int64_t t = m_tp->integer();
        m_parallel.tp = t;
        if (t == 1 && m_parallel.sequenceParallel) { // sequence parallelism splits over the TP group
            m_parallel.sequenceParallel = false;
            const bool was = m_updating;
            m_updating = true;
            m_sequenceParallel->setChecked(false);
            m_updating = was;
        }
        emitEdit(tr("Tensor parallel ×%1").arg(t), kMergeTp);
    });
    connect(m_sequenceParallel, &QCheckBox::toggled, this, [this](bool on) {
        m_parallel.sequenceParallel = on;
        emitEdit(on ? tr("Sequence parallel") : tr("No sequence parallelism"));
    });
    connect(m_pp, &SettingSpinBox::settingEdited, this, [this] {
        const std::int64_t p = m_pp->integer();
        m_parallel.pp = p;
        emitEdit(tr("Pipeline ×%1").arg(p), kMergeTp + 10);
    });
    connect(m_micro, &SettingSpinBox::settingEdited, this, [this] {
        const std::int64_t mb = m_micro->integer();
        m_parallel.microbatches = mb;
        emitEdit(tr("%1 micro-batches").arg(mb), kMergeTp + 11);
    });
    connect(m_bucketCap, &SettingSpinBox::settingEdited, this, [this] {
        const double v = m_bucketCap->real();
        m_parallel.bucketCapMb = v;
        emitEdit(tr("DDP buckets %1 MiB").arg(v), kMergeBucket);
    });
    connect(m_bucketView, &QCheckBox::toggled, this, [this](bool on) {
        m_parallel.gradientAsBucketView = on;
        emitEdit(on ? tr("Gradients as bucket views") : tr("Gradients apart from the buckets"));
    });
    connect(m_reduceBucket, &SettingSpinBox::settingEdited, this, [this] {
        m_parallel.reduceBucketSize = m_reduceBucket->integer();
        emitEdit(tr("ZeRO reduce buckets %1 M").arg(m_reduceBucket->value()), kMergeReduce);
    });
    connect(m_overlap, &QComboBox::currentIndexChanged, this, [this] {
        m_parallel.overlapComm = m_overlap->currentData().toInt();
        emitEdit(tr("ZeRO %1").arg(m_overlap->currentText()));
    });
    connect(m_zeroImpl, &QComboBox::currentIndexChanged, this, [this] {
        m_parallel.zeroImpl = static_cast<ZeroImpl>(m_zeroImpl->currentData().toInt());
        emitEdit(tr("ZeRO-1 by %1").arg(m_zeroImpl->currentText()));
    });
    connect(m_perNode, &SettingSpinBox::settingEdited, this, [this] {
        const std::int64_t n = m_perNode->integer();
        m_parallel.gpusPerNode = n;
        emitEdit(tr("%1 GPUs per node").arg(n), kMergePerNode);
    });
    connect(m_limitGathers, &QCheckBox::toggled, this, [this](bool on) {
        m_parallel.limitAllGathers = on;
        emitEdit(on ? tr("Limit all-gathers") : tr("Unlimited all-gathers"));
    });
    connect(m_prefetchPre, &QCheckBox::toggled, this, [this](bool on) {
        m_parallel.backwardPrefetchPre = on;
        emitEdit(on ? tr("Backward prefetch: pre") : tr("Backward prefetch: post"));
    });
    connect(m_reshard, &QCheckBox::toggled, this, [this](bool on) {
        m_parallel.reshardAfterForward = on;
        emitEdit(on ? tr("Reshard after forward") : tr("Keep gathered parameters to the backward"));
    });
    setParallel({});
}

void ParallelEditor::setParallel(const ParallelConfig& p) {
    m_updating = true;
    m_parallel = p;
    m_gpus->setSettingValue(static_cast<std::int64_t>(p.gpus));
    m_strategy->setCurrentIndex(m_strategy->findData(static_cast<int>(p.strategy)));
    m_tp->setSettingValue(static_cast<std::int64_t>(p.tp));
    m_sequenceParallel->setChecked(p.sequenceParallel);
    m_pp->setSettingValue(static_cast<std::int64_t>(p.pp));
    m_micro->setSettingValue(static_cast<std::int64_t>(p.microbatches));
    m_bucketCap->setSettingValue(p.bucketCapMb);
    m_bucketView->setChecked(p.gradientAsBucketView);
    m_reduceBucket->setSettingValue(static_cast<std::int64_t>(p.reduceBucketSize));
    m_overlap->setCurrentIndex(m_overlap->findData(p.overlapComm));
    m_zeroImpl->setCurrentIndex(m_zeroImpl->findData(static_cast<int>(p.zeroImpl)));
    m_perNode->setSettingValue(static_cast<std::int64_t>(p.gpusPerNode));
    m_limitGathers->setChecked(p.limitAllGathers);
    m_prefetchPre->setChecked(p.backwardPrefetchPre);
    m_reshard->setChecked(p.reshardAfterForward);
    updateVisible();
    m_updating = false;
}

QWidget* ParallelEditor::countField() const {
    return m_gpus;
}

QWidget* ParallelEditor::firstField() const {
    return m_strategy;
}

QWidget* ParallelEditor::lastField() const {
    return m_advanced;
}

void ParallelEditor::emitEdit(const QString& what, int mergeId) {
    updateVisible();
    if (m_updating) return;
    emit parallelEdited(m_parallel, what, mergeId);
}

void ParallelEditor::updateVisible() {
    // Only the knobs of the chosen strategy, and only when asked for: the form stays short at 1280 x 720.
    const ParallelStrategy s = m_parallel.strategy;
    const bool adv = m_advanced->isChecked() && m_parallel.gpus > 1;
    const bool ddp = s == ParallelStrategy::Ddp ||
                     (s == ParallelStrategy::Zero1 && m_parallel.zeroImpl == ZeroImpl::Torch);
    const bool zero =
        s == ParallelStrategy::Zero1 || s == ParallelStrategy::Zero2 || s == ParallelStrategy::Zero3;
    const bool fsdp = s == ParallelStrategy::Fsdp || s == ParallelStrategy::FsdpGradOp ||
                      s == ParallelStrategy::Hsdp || s == ParallelStrategy::Fsdp2;
    m_form->setRowVisible(m_tpRow, adv);
    m_form->setRowVisible(m_ddpRow, adv && ddp);
    m_form->setRowVisible(m_zeroRow, adv && zero);
    m_form->setRowVisible(m_fsdpRow, adv && fsdp);
    m_zeroImpl->setVisible(s == ParallelStrategy::Zero1);
    m_perNode->setVisible(s == ParallelStrategy::Hsdp);
    m_reshard->setVisible(s == ParallelStrategy::Fsdp2);
    m_sequenceParallel->setEnabled(m_parallel.tp > 1);
    // one GPU: only the count beside the GPU; the strategy row appears with a second GPU
    m_form->setRowVisible(m_strategyRow, m_parallel.gpus > 1);
}

} // namespace batchfit
