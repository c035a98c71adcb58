<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>batchfit::AddLayerMenu</name>
    <message>
        <source>Search ops…</source>
        <translation>搜索算子…</translation>
    </message>
    <message>
        <source>No op matches &apos;%1&apos;</source>
        <translation>没有与 &apos;%1&apos; 匹配的算子</translation>
    </message>
</context>
<context>
    <name>batchfit::AllocConfField</name>
    <message>
        <source>PYTORCH_CUDA_ALLOC_CONF: the options of PyTorch&apos;s CUDA caching allocator, which BatchFit replays to find the reserved memory and the verdict, e.g. expandable_segments:True (less fragmentation) or max_split_size_mb:128. Empty: PyTorch&apos;s defaults. Press Enter to apply.</source>
        <translation>PYTORCH_CUDA_ALLOC_CONF：PyTorch CUDA 缓存分配器的选项，BatchFit 据此回放分配过程，得出预留显存和结论，例如 expandable_segments:True（碎片更少）或 max_split_size_mb:128。留空：PyTorch 的默认设置。按回车生效。</translation>
    </message>
    <message>
        <source>Allocator settings:</source>
        <translation>分配器设置：</translation>
    </message>
    <message>
        <source>Not applied: %1</source>
        <translation>未生效：%1</translation>
    </message>
    <message>
        <source>Advanced</source>
        <translation>高级</translation>
    </message>
    <message>
        <source>PyTorch&apos;s CUDA caching allocator settings (PYTORCH_CUDA_ALLOC_CONF)</source>
        <translation>PyTorch CUDA 缓存分配器的设置（PYTORCH_CUDA_ALLOC_CONF）</translation>
    </message>
    <message>
        <source>e.g. 896,512,256</source>
        <translation>例如 896,512,256</translation>
    </message>
    <message>
        <source>Variable-length batches (dynamic padding): the sequence lengths of the steps before the one shown, in order, replayed through the caching allocator. The first is the first training step, then steady steps; the model&apos;s own length, the longest, comes last. The blocks shorter batches leave fragment the cache the long one meets. Empty: every step has the model&apos;s length. Press Enter to apply.</source>
        <translation>变长批次（动态填充）：所示训练步之前各步的序列长度，按顺序经缓存分配器回放。第一个是第一个训练步，其后是稳定状态的训练步；模型自身的长度（最长）排在最后。较短批次留下的块会使长批次遇到的缓存碎片化。留空：每一步都用模型的长度。按回车键应用。</translation>
    </message>
    <message>
        <source>Earlier batch lengths:</source>
        <translation>之前批次的长度：</translation>
    </message>
    <message>
        <source>e.g. 50000</source>
        <translation>例如 50000</translation>
    </message>
    <message>
        <source>The training samples in one epoch (len(dataset)). With DataLoader(drop_last=False) the epoch&apos;s last batch holds what is left, and the next epoch&apos;s first batch meets the cache it left: that smaller step is replayed before the one shown. With several GPUs each gets its share, as DistributedSampler pads it. Empty: every batch is full. Press Enter to apply.</source>
        <translation>一个 epoch 的训练样本数（len(dataset)）。使用 DataLoader(drop_last=False) 时，epoch 的最后一个批次装的是剩下的样本，下一个 epoch 的第一个批次会遇到它留下的缓存：这个较小的训练步会在所示训练步之前回放。多张 GPU 时每张各得一份（DistributedSampler 会补齐）。留空：每个批次都是满的。按回车键应用。</translation>
    </message>
    <message>
        <source>Samples per epoch:</source>
        <translation>每个 epoch 的样本数：</translation>
    </message>
</context>
<context>
    <name>batchfit::AllocatorStrip</name>
    <message>
        <source>setup</source>
        <translation>准备</translation>
    </message>
    <message>
        <source>forward</source>
        <translation>前向</translation>
    </message>
    <message>
        <source>backward</source>
        <translation>反向</translation>
    </message>
    <message>
        <source>optimizer step</source>
        <translation>优化器更新</translation>
    </message>
    <message>
        <source>The caching allocator through one step: allocated bytes (tensors, in whole blocks) and reserved bytes (the segments it holds). Click or drag, or use the arrow keys, to see the segments at a moment.</source>
        <translation>缓存分配器在一步训练中的变化：已分配字节（张量，按整块计）和预留字节（它持有的内存段）。单击、拖动或用方向键，查看某一时刻的内存段。</translation>
    </message>
    <message>
        <source>allocated</source>
        <translation>已分配</translation>
    </message>
    <message>
        <source>reserved</source>
        <translation>预留</translation>
    </message>
    <message>
        <source>peak allocated</source>
        <translation>已分配峰值</translation>
    </message>
    <message>
        <source>out of memory</source>
        <translation>显存不足</translation>
    </message>
</context>
<context>
    <name>batchfit::AttributeTableModel</name>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>Attribute</source>
        <translation>属性</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>值</translation>
    </message>
    <message>
        <source>%1: &apos;%2&apos; was not applied (%3); it stays %4.</source>
        <translation>%1：未采用 &apos;%2&apos;（%3）；仍为 %4。</translation>
    </message>
    <message>
        <source>unset</source>
        <translation>未设置</translation>
    </message>
</context>
<context>
    <name>batchfit::AttributeValue</name>
    <message>
        <source>a value is required (delete the attribute to use the default)</source>
        <translation>必须填写一个值（如需使用默认值，请删除该属性）</translation>
    </message>
    <message>
        <source>&apos;%1&apos; starts a list but has no closing &apos;]&apos;</source>
        <translation>“%1”以列表开头，但缺少右括号“]”</translation>
    </message>
    <message>
        <source>list items must be whole numbers; &apos;%1&apos; is not</source>
        <translation>列表中的每一项都必须是整数，“%1”不是</translation>
    </message>
    <message>
        <source>&apos;%1&apos; is not a finite number</source>
        <translation>“%1”不是有限的数值</translation>
    </message>
    <message>
        <source>expected %1, e.g. %2; &apos;%3&apos; is not</source>
        <translation>这里需要%1，例如 %2；“%3”不符合</translation>
    </message>
    <message>
        <source>true/false</source>
        <translation>true/false（布尔值）</translation>
    </message>
    <message>
        <source>an integer</source>
        <translation>整数</translation>
    </message>
    <message>
        <source>a number</source>
        <translation>数值</translation>
    </message>
    <message>
        <source>text</source>
        <translation>文本</translation>
    </message>
    <message>
        <source>a list of integers</source>
        <translation>整数列表</translation>
    </message>
</context>
<context>
    <name>batchfit::Autosave</name>
    <message>
        <source>%1 could not be locked; a restart may offer this session&apos;s autosave while it runs.</source>
        <translation>无法锁定 %1；本次会话运行期间，重新启动可能会提示恢复它的自动保存。</translation>
    </message>
    <message>
        <source>Autosave failed: %1 could not be written: %2</source>
        <translation>自动保存失败：无法写入 %1：%2</translation>
    </message>
    <message>
        <source>Autosave failed: %1 could not be written.</source>
        <translation>自动保存失败：无法写入 %1。</translation>
    </message>
</context>
<context>
    <name>batchfit::AutosaveRestore</name>
    <message>
        <source>BatchFit did not close normally. Restore the unsaved model from %1?</source>
        <translation>BatchFit 上次没有正常关闭。要恢复 %1 时未保存的模型吗？</translation>
    </message>
    <message>
        <source>Restore Unsaved Model</source>
        <translation>恢复未保存的模型</translation>
    </message>
    <message>
        <source>&amp;Restore</source>
        <translation>恢复(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Discard</source>
        <translation>丢弃(&amp;D)</translation>
    </message>
    <message>
        <source>The model had not been saved to a file yet.</source>
        <translation>该模型当时还没有保存到文件。</translation>
    </message>
    <message>
        <source>It holds unsaved changes to %1.</source>
        <translation>其中有对 %1 的未保存修改。</translation>
    </message>
    <message>
        <source>Cannot Restore Model</source>
        <translation>无法恢复模型</translation>
    </message>
    <message>
        <source>The autosave %1 could not be restored; it is kept for the next start.

%2</source>
        <translation>无法恢复自动保存 %1；它会保留到下次启动。

%2</translation>
    </message>
    <message>
        <source>Restore Autosave</source>
        <translation>恢复自动保存</translation>
    </message>
</context>
<context>
    <name>batchfit::BatchPanel</name>
    <message>
        <source>&amp;Batch size:</source>
        <translation>批大小(&amp;B)：</translation>
    </message>
    <message>
        <source>Micro-batch size: drag to see the memory at each batch size.</source>
        <translation>微批次大小：拖动滑块，查看每个批大小下的显存占用。</translation>
    </message>
    <message>
        <source>Largest batch that fits</source>
        <translation>能放下的最大批</translation>
    </message>
    <message>
        <source>Jump to the largest batch size that fits the usable memory (Ctrl+M).</source>
        <translation>跳到可用显存能放下的最大批大小（Ctrl+M）。</translation>
    </message>
    <message>
        <source>What the GPU shows at the peak of one training step (nvidia-smi), against its capacity. It fits when it stays below the usable memory (capacity minus margin).</source>
        <translation>训练一步时显存峰值（即 nvidia-smi 显示的占用）与显存容量的对比。只要不超过可用显存（容量减去安全余量），就放得下。</translation>
    </message>
    <message>
        <source>even batch 1 does not fit</source>
        <translation>批大小为 1 也放不下</translation>
    </message>
    <message>
        <source>largest: %1 · largest multiple of 8: %2</source>
        <translation>最大：%1 · 8 的最大倍数：%2</translation>
    </message>
    <message>
        <source>fits at every batch up to %1</source>
        <translation>批大小不超过 %1 时都放得下</translation>
    </message>
    <message>
        <source>&apos;%1&apos; is not a batch size (a whole number from 1 to %2); the batch stays %3.</source>
        <translation>&apos;%1&apos; 不是有效的批大小（应为 1 到 %2 的整数）；批大小仍为 %3。</translation>
    </message>
    <message>
        <source>%1 at sequence %2</source>
        <translation>%1（序列长度 %2）</translation>
    </message>
    <message>
        <source>%1 per GPU</source>
        <translation>%1（每张 GPU）</translation>
    </message>
    <message>
        <source>PyTorch would stop with:</source>
        <translation>PyTorch 会报错停止：</translation>
    </message>
    <message>
        <source>largest: %1</source>
        <translation>最大：%1</translation>
    </message>
</context>
<context>
    <name>batchfit::BreakdownModel</name>
    <message>
        <source>Peak GPU memory (must fit)</source>
        <translation>显存峰值（必须放得下）</translation>
    </message>
    <message>
        <source>Host memory (offloaded)</source>
        <translation>主机内存（已卸载）</translation>
    </message>
    <message>
        <source>Reserved by PyTorch&apos;s caching allocator beyond what tensors use (segments, fragmentation).</source>
        <translation>PyTorch 缓存分配器在张量实际用量之外额外预留的显存（内存段、碎片）。</translation>
    </message>
    <message>
        <source>What nvidia-smi would show at the peak of the step: this must fit the usable memory.</source>
        <translation>训练一步达到峰值时 nvidia-smi 显示的占用；它必须放进可用显存。</translation>
    </message>
    <message>
        <source>Optimizer states kept in CPU memory; not part of the GPU budget.</source>
        <translation>保存在 CPU 内存中的优化器状态，不计入显存预算。</translation>
    </message>
    <message>
        <source>Component</source>
        <translation>组成部分</translation>
    </message>
    <message>
        <source>At the peak</source>
        <translation>峰值时</translation>
    </message>
    <message>
        <source>Share</source>
        <translation>占比</translation>
    </message>
    <message>
        <source>Paged optimizer states</source>
        <translation>分页优化器状态</translation>
    </message>
    <message>
        <source>bitsandbytes&apos; paged optimizer keeps these states in CUDA managed memory: outside PyTorch&apos;s counters and the peak; the driver moves them to host memory when the GPU runs short (slower steps, not an out-of-memory error).</source>
        <translation>bitsandbytes 的分页优化器把这些状态放在 CUDA 托管内存中：不计入 PyTorch 的统计，也不计入峰值；显存不足时驱动会把它们换到主机内存（每步变慢，但不会显存溢出）。</translation>
    </message>
    <message>
        <source>Allocator reserve (replay)</source>
        <translation>分配器预留（回放）</translation>
    </message>
    <message>
        <source>Allocator reserve (override)</source>
        <translation>分配器预留（手动设定）</translation>
    </message>
    <message>
        <source>From the set-up&apos;s fragmentation override (a fixed fraction of the peak, rounded to 2 MiB), not from the replay: peak reserved %1.</source>
        <translation>来自设置中手动指定的碎片比例（峰值的固定比例，向上取整到 2 MiB），而不是回放：预留峰值 %1。</translation>
    </message>
    <message>
        <source>PyTorch&apos;s default settings</source>
        <translation>PyTorch 的默认设置</translation>
    </message>
    <message>
        <source>peak allocated (on the GPU, with block slack): %1</source>
        <translation>已分配峰值（GPU 上，含块内余量）：%1</translation>
    </message>
    <message>
        <source>peak reserved: %1</source>
        <translation>预留峰值：%1</translation>
    </message>
    <message>
        <source>free pieces of split segments: %1</source>
        <translation>已拆分内存段中的空闲碎片：%1</translation>
    </message>
    <message>
        <source>segments at most: %1 · cudaMalloc calls: %2</source>
        <translation>最多内存段数：%1 · cudaMalloc 调用次数：%2</translation>
    </message>
    <message>
        <source>The Segments tab shows them through the step.</source>
        <translation>“内存段”标签页展示它们在整步中的变化。</translation>
    </message>
    <message>
        <source>From a replay of one step through the caching allocator (%1), on a GPU large enough:</source>
        <translation>在足够大的 GPU 上用缓存分配器回放一步（%1）：</translation>
    </message>
    <message>
        <source>From a replay of %1 steps through the caching allocator (%2; the last one is shown), on a GPU large enough:</source>
        <translation>在足够大的 GPU 上用缓存分配器回放 %1 步（%2；显示最后一步）：</translation>
    </message>
    <message>
        <source>the steps&apos; sequence lengths, in order: %1</source>
        <translation>各步的序列长度（按顺序）：%1</translation>
    </message>
    <message>
        <source>the epoch&apos;s last batch (%1 samples) runs before the step shown</source>
        <translation>epoch 的最后一个批次（%1 个样本）在所示训练步之前运行</translation>
    </message>
    <message>
        <source>Peak on this GPU (fits with cache flushes)</source>
        <translation>本 GPU 上的峰值（需清空缓存才放得下）</translation>
    </message>
    <message>
        <source>What nvidia-smi would show at the peak of the step on this GPU. On a GPU large enough the step would reserve %1; on this one PyTorch frees its cached blocks when a cudaMalloc fails and tries again (no out-of-memory error, slower steps: each retry synchronizes the GPU).</source>
        <translation>训练一步达到峰值时，这块 GPU 上 nvidia-smi 会显示的占用。在显存足够大的 GPU 上这一步会预留 %1；在这块 GPU 上，cudaMalloc 失败时 PyTorch 会释放缓存块后重试（不会显存溢出，但每次重试都要同步 GPU，训练变慢）。</translation>
    </message>
    <message>
        <source>%1 (incl. %2 autocast weight copies)</source>
        <translation>%1（含 %2 autocast 权重副本）</translation>
    </message>
    <message>
        <source>Host memory (offloaded, per GPU)</source>
        <translation>主机内存（已卸载，每张 GPU）</translation>
    </message>
    <message>
        <source>Of the %1 saved at the end of the forward pass, %2 are autocast&apos;s cached half-precision copies of the weights (torch.autocast keeps one per weight until the forward ends, and the backward keeps them); the layer table does not count them. With ZeRO-3 or FSDP these are copies of the gathered, whole weights.</source>
        <translation>前向结束时保存的 %1 中，有 %2 是 autocast 缓存的权重半精度副本（torch.autocast 为每个权重保留一份直到前向结束，反向传播也会保留它们）；逐层表不计入这部分。使用 ZeRO-3 或 FSDP 时，这些是聚合后完整权重的副本。</translation>
    </message>
    <message>
        <source>Optimizer states kept in CPU memory, one GPU&apos;s share; not part of the GPU budget. A node holds them for its %1 GPUs: %2 of host memory.</source>
        <translation>保存在 CPU 内存中的优化器状态（一张 GPU 的份额），不计入显存预算。一个节点要为其 %1 张 GPU 保存它们：共 %2 主机内存。</translation>
    </message>
    <message>
        <source>Outside PyTorch (CUDA context, libraries)</source>
        <translation>PyTorch 之外（CUDA 上下文、各库）</translation>
    </message>
    <message>
        <source>Memory outside PyTorch&apos;s allocator, as you measured it (the override in the set-up): %1.</source>
        <translation>PyTorch 分配器之外的显存，按您的实测值（设置中的覆盖值）：%1。</translation>
    </message>
    <message>
        <source>CUDA context: %1</source>
        <translation>CUDA 上下文：%1</translation>
    </message>
    <message>
        <source>cuBLAS kernels: %1</source>
        <translation>cuBLAS 内核：%1</translation>
    </message>
    <message>
        <source>eager module loading: %1</source>
        <translation>模块预先加载：%1</translation>
    </message>
    <message>
        <source>cuDNN (the model has convolutions): %1</source>
        <translation>cuDNN（模型含卷积）：%1</translation>
    </message>
    <message numerus="yes">
        <source>NCCL, %n communicator(s): %1</source>
        <translation>
            <numerusform>NCCL，%n 个通信器：%1</numerusform>
        </translation>
    </message>
    <message>
        <source>Memory nvidia-smi shows beyond PyTorch&apos;s memory_reserved(): %1. Sources: docs/memory-model.md, section 6.3.</source>
        <translation>nvidia-smi 显示的、超出 PyTorch memory_reserved() 的显存：%1。来源见 docs/memory-model.md 第 6.3 节。</translation>
    </message>
    <message>
        <source>Saved activations offloaded to host memory: %1, held from the forward to their backward and copied over PCIe, %2 per step (to the host and back).</source>
        <translation>卸载到主机内存的保存激活：%1，从前向保留到各自的反向，经 PCIe 拷贝，每步 %2（拷到主机再拷回）。</translation>
    </message>
    <message>
        <source>Optimizer states in host memory: %1.</source>
        <translation>主机内存中的优化器状态：%1。</translation>
    </message>
    <message>
        <source>A node holds this for its %1 GPUs: %2.</source>
        <translation>一个节点为其 %1 张 GPU 保存这些：%2。</translation>
    </message>
    <message>
        <source>Not part of the GPU budget.</source>
        <translation>不计入 GPU 显存预算。</translation>
    </message>
    <message>
        <source>Parameter and gradient shards in host memory: %1; %2 cross PCIe per step (shards to the GPU for each all-gather, gradients back).</source>
        <translation>主机内存中的参数分片和梯度分片：%1；每步经 PCIe 传输 %2（每次 all-gather 时分片拷到 GPU，梯度拷回）。</translation>
    </message>
    <message>
        <source>the colocated vLLM engine (its share of the GPU): %1</source>
        <translation>同进程 vLLM 引擎（其占用的 GPU 份额）：%1</translation>
    </message>
</context>
<context>
    <name>batchfit::BudgetBar</name>
    <message>
        <source>The memory budget at the current batch: what is live at the peak, then the overheads, against the usable memory (dashed) and the capacity.</source>
        <translation>当前批大小下的显存预算：先是峰值时刻驻留的各部分，再是额外开销；虚线为可用显存，实线为显存容量。</translation>
    </message>
    <message>
        <source>Allocator reserve</source>
        <translation>分配器预留</translation>
    </message>
    <message>
        <source>CUDA context</source>
        <translation>CUDA 上下文</translation>
    </message>
    <message>
        <source>needs %1</source>
        <translation>需要 %1</translation>
    </message>
    <message>
        <source>capacity %1</source>
        <translation>容量 %1</translation>
    </message>
    <message>
        <source>usable %1</source>
        <translation>可用 %1</translation>
    </message>
    <message>
        <source>PyTorch would stop with:</source>
        <translation>PyTorch 会报错停止：</translation>
    </message>
    <message>
        <source>On a GPU large enough the step would need %1; on this one a cudaMalloc that fails makes it free its cached segments and try again, so %2 is enough here (slower: each retry synchronizes the GPU).</source>
        <translation>在显存足够大的 GPU 上这一步需要 %1；在这块 GPU 上，cudaMalloc 失败会让分配器释放缓存的内存段后重试，因此 %2 就够了（更慢：每次重试都会同步 GPU）。</translation>
    </message>
</context>
<context>
    <name>batchfit::ByteFormat</name>
    <message>
        <source>%1 GiB</source>
        <translation>%1 GiB</translation>
    </message>
    <message>
        <source>%1 MiB</source>
        <translation>%1 MiB</translation>
    </message>
    <message>
        <source>%1 KiB</source>
        <translation>%1 KiB</translation>
    </message>
    <message>
        <source>%1 B</source>
        <translation>%1 B</translation>
    </message>
    <message>
        <source>fits: %1 of %2 GiB usable (%3%)</source>
        <translation>放得下：占用 %1 / 可用 %2 GiB（%3%）</translation>
    </message>
    <message>
        <source>out of memory by %1 GiB</source>
        <translation>显存不足，还差 %1 GiB</translation>
    </message>
    <message>
        <source>%1%</source>
        <translation>%1%</translation>
    </message>
    <message>
        <source>fits with cache flushes: %1 of %2 GiB usable (%3%)</source>
        <translation>清空缓存后放得下：占用 %1 / 可用 %2 GiB（%3%）</translation>
    </message>
</context>
<context>
    <name>batchfit::ComponentStyle</name>
    <message>
        <source>Model parameters</source>
        <translation>模型参数</translation>
    </message>
    <message>
        <source>Gradients</source>
        <translation>反向梯度</translation>
    </message>
    <message>
        <source>Optimizer states</source>
        <translation>优化器状态</translation>
    </message>
    <message>
        <source>Activations</source>
        <translation>前向激活</translation>
    </message>
    <message>
        <source>Temporaries</source>
        <translation>临时缓冲</translation>
    </message>
    <message>
        <source>Allocator reserve + CUDA context</source>
        <translation>分配器预留 + CUDA 上下文</translation>
    </message>
    <message>
        <source>The weights and buffers of the model on the GPU (including half-precision copies).</source>
        <translation>模型在 GPU 上的权重和 buffer（包括半精度副本）。</translation>
    </message>
    <message>
        <source>The .grad tensors of every trainable parameter, filled during the backward pass.</source>
        <translation>每个可训练参数的 .grad 张量，在反向传播中写入。</translation>
    </message>
    <message>
        <source>What the optimizer keeps per parameter, e.g. Adam&apos;s two moments and fp32 master weights.</source>
        <translation>优化器为每个参数保存的状态，例如 Adam 的一阶、二阶矩和 fp32 主权重。</translation>
    </message>
    <message>
        <source>Forward activations saved for the backward pass; they grow with the batch size.</source>
        <translation>前向传播中为反向传播保存的激活，随批大小线性增长。</translation>
    </message>
    <message>
        <source>Short-lived buffers of single operations (workspaces, gradients of activations) live at the peak.</source>
        <translation>峰值时刻仍驻留的单个算子的短期缓冲（工作区、激活的梯度等）。</translation>
    </message>
    <message>
        <source>Memory outside PyTorch&apos;s tensors: the caching allocator&apos;s reserve and the CUDA context.</source>
        <translation>PyTorch 张量之外的显存：缓存分配器的预留和 CUDA 上下文。</translation>
    </message>
    <message>
        <source>Does not fit</source>
        <translation>放不下</translation>
    </message>
</context>
<context>
    <name>batchfit::DocsWindow</name>
    <message>
        <source>BatchFit Documentation</source>
        <translation>BatchFit 文档</translation>
    </message>
</context>
<context>
    <name>batchfit::Document</name>
    <message>
        <source>Untitled</source>
        <translation>未命名</translation>
    </message>
</context>
<context>
    <name>batchfit::FileController</name>
    <message>
        <source>BatchFit models (*.json);;All files (*)</source>
        <translation>BatchFit 模型 (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Open Model</source>
        <translation>打开模型</translation>
    </message>
    <message>
        <source>Cannot Open Model</source>
        <translation>无法打开模型</translation>
    </message>
    <message>
        <source>%1 could not be read: %2</source>
        <translation>无法读取 %1：%2</translation>
    </message>
    <message>
        <source>%1 is larger than %2 MiB; it is not a BatchFit model.</source>
        <translation>%1 超过 %2 MiB，不是 BatchFit 模型文件。</translation>
    </message>
    <message>
        <source>The model was not opened; the current one is unchanged.

%1</source>
        <translation>未打开该模型，当前模型保持不变。

%1</translation>
    </message>
    <message>
        <source>Cannot Load Preset</source>
        <translation>无法加载预设模型</translation>
    </message>
    <message>
        <source>Save Model As</source>
        <translation>模型另存为</translation>
    </message>
    <message>
        <source>Cannot Save Model</source>
        <translation>无法保存模型</translation>
    </message>
    <message>
        <source>Unsaved Changes</source>
        <translation>未保存的修改</translation>
    </message>
    <message>
        <source>The model &quot;%1&quot; has changes that are not saved. Save them first?</source>
        <translation>模型“%1”有尚未保存的修改。要先保存吗？</translation>
    </message>
    <message>
        <source>%1 could not be written: %2

The previous file, if any, is unchanged. The model is still open with its changes; save it somewhere else with File → Save As….</source>
        <translation>无法写入 %1：%2

原有文件（如果有）保持不变。模型仍然打开，修改都还在；请用“文件 → 另存为…”保存到别处。</translation>
    </message>
    <message>
        <source>Opened with a Warning</source>
        <translation>已打开（有警告）</translation>
    </message>
    <message>
        <source>%1

Choose the GPU in the set-up; Save stores it.</source>
        <translation>%1

请在训练设置中选择 GPU；保存时会一并存入文件。</translation>
    </message>
</context>
<context>
    <name>batchfit::FitHeatMap</name>
    <message>
        <source>Computing…</source>
        <translation>正在计算…</translation>
    </message>
    <message>
        <source>No sequence lengths to show.</source>
        <translation>没有可显示的序列长度。</translation>
    </message>
    <message>
        <source>Computing the largest batch at each sequence length…</source>
        <translation>正在计算每个序列长度下能放下的最大批大小…</translation>
    </message>
    <message>
        <source>batch 1 does not fit</source>
        <translation>批大小 1 也放不下</translation>
    </message>
    <message>
        <source>largest %1%2 · %3 tokens/step</source>
        <translation>最大 %1%2 · 每步 %3 个 token</translation>
    </message>
    <message>
        <source>Batch %1 at sequence %2: too large to count — does not fit</source>
        <translation>批大小 %1、序列长度 %2：大到无法计算——放不下</translation>
    </message>
    <message>
        <source>Batch %1 at sequence %2: fits, %3 of %4 usable (%5%)</source>
        <translation>批大小 %1、序列长度 %2：放得下，需要 %3，可用 %4（%5%）</translation>
    </message>
    <message>
        <source>Batch %1 at sequence %2: does not fit, needs %3 of %4 usable</source>
        <translation>批大小 %1、序列长度 %2：放不下，需要 %3，可用 %4</translation>
    </message>
    <message>
        <source>Largest batch at sequence %1: %2, %3 tokens per step</source>
        <translation>序列长度 %1 时的最大批大小：%2，每步 %3 个 token</translation>
    </message>
    <message>
        <source>(%1 accumulation steps)</source>
        <translation>（%1 个梯度累积步）</translation>
    </message>
    <message>
        <source>sequence</source>
        <translation>序列长度</translation>
    </message>
    <message>
        <source>largest batch · tokens per step</source>
        <translation>最大批大小 · 每步 token 数</translation>
    </message>
    <message>
        <source>%1%</source>
        <translation>%1%</translation>
    </message>
    <message>
        <source>micro-batch size</source>
        <translation>微批大小</translation>
    </message>
    <message>
        <source>green: fits (darker: more memory used) · red: does not fit · outlined: the model&apos;s length</source>
        <translation>绿色：放得下（越深用得越多）· 红色：放不下 · 描边：模型本身的长度</translation>
    </message>
    <message>
        <source>peak in the loss</source>
        <translation>峰值在损失</translation>
    </message>
    <message>
        <source>The step peaks in the model&apos;s head and loss (%1): the logits, not the layers.</source>
        <translation>这一步的峰值在模型的输出头和损失（%1）：是 logits，而不是各层。</translation>
    </message>
    <message>
        <source>The step peaks at %1.</source>
        <translation>这一步的峰值在 %1。</translation>
    </message>
</context>
<context>
    <name>batchfit::GpuFitModel</name>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>fits</source>
        <translation>放得下</translation>
    </message>
    <message>
        <source>does not fit</source>
        <translation>放不下</translation>
    </message>
    <message>
        <source>%1: %2 (nvidia-smi total; source: %3). Double-click to use this GPU.</source>
        <translation>%1：%2（nvidia-smi 总量；来源：%3）。双击即改用此 GPU。</translation>
    </message>
    <message>
        <source>GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>显存</translation>
    </message>
    <message>
        <source>Largest batch</source>
        <translation>最大批大小</translation>
    </message>
    <message>
        <source>Batch %1</source>
        <translation>批大小 %1</translation>
    </message>
</context>
<context>
    <name>batchfit::HfImportDialog</name>
    <message>
        <source>Import Hugging Face Config</source>
        <translation>导入 Hugging Face 配置</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> 个词元</translation>
    </message>
    <message>
        <source>Tokens per sample: %L1 by default (or the maximum, if smaller); at most the config&apos;s maximum positions, %L2.</source>
        <translation>每个样本的词元数：默认 %L1（若最大值更小则取最大值）；最多为配置中的最大位置数 %L2。</translation>
    </message>
    <message>
        <source>of at most %L1</source>
        <translation>最多 %L1</translation>
    </message>
    <message>
        <source>eager (keeps the attention scores: memory grows with the square of the sequence)</source>
        <translation>eager（保留注意力分数：显存随序列长度的平方增长）</translation>
    </message>
    <message>
        <source>mem_efficient (memory-efficient kernel: no score matrix kept)</source>
        <translation>mem_efficient（省显存内核：不保留分数矩阵）</translation>
    </message>
    <message>
        <source>flash (FlashAttention: no score matrix kept)</source>
        <translation>flash（FlashAttention：不保留分数矩阵）</translation>
    </message>
    <message>
        <source>%1 — default for this model</source>
        <translation>%1 — 此模型的默认值</translation>
    </message>
    <message>
        <source>Model:</source>
        <translation>模型：</translation>
    </message>
    <message>
        <source>&amp;Sequence length:</source>
        <translation>序列长度(&amp;S)：</translation>
    </message>
    <message>
        <source>&amp;Attention:</source>
        <translation>注意力(&amp;A)：</translation>
    </message>
    <message>
        <source>an image of %1 per sample</source>
        <translation>每个样本一张 %1 的图像</translation>
    </message>
    <message>
        <source>Input:</source>
        <translation>输入：</translation>
    </message>
</context>
<context>
    <name>batchfit::ImportController</name>
    <message>
        <source>This build has no ONNX support: rebuild BatchFit with libonnx-dev and libprotobuf-dev installed (CMake option BATCHFIT_WITH_ONNX).</source>
        <translation>此版本不支持 ONNX：请安装 libonnx-dev 和 libprotobuf-dev 后重新构建 BatchFit（CMake 选项 BATCHFIT_WITH_ONNX）。</translation>
    </message>
    <message>
        <source>Cannot Import Model</source>
        <translation>无法导入模型</translation>
    </message>
    <message>
        <source>Import Hugging Face Config</source>
        <translation>导入 Hugging Face 配置</translation>
    </message>
    <message>
        <source>Hugging Face configs (config.json *.json);;All files (*)</source>
        <translation>Hugging Face 配置 (config.json *.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Import ONNX Model</source>
        <translation>导入 ONNX 模型</translation>
    </message>
    <message>
        <source>ONNX models (*.onnx);;All files (*)</source>
        <translation>ONNX 模型 (*.onnx);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Importing %1…</source>
        <translation>正在导入 %1…</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Importing Model</source>
        <translation>正在导入模型</translation>
    </message>
    <message>
        <source>The model was not imported; the current one is unchanged.

%1</source>
        <translation>模型未导入，当前模型保持不变。

%1</translation>
    </message>
    <message>
        <source>Import from the Hugging Face Cache</source>
        <translation>从 Hugging Face 缓存导入</translation>
    </message>
    <message>
        <source>No model config in %1 yet. Model id (ORG/NAME), looked up offline there:</source>
        <translation>%1 中还没有模型配置。模型 ID（组织/名称），离线在该目录中查找：</translation>
    </message>
    <message numerus="yes">
        <source>%n model(s) in %1 (offline). Choose one, or type a model id (ORG/NAME):</source>
        <translation>
            <numerusform>%1 中有 %n 个模型（离线）。选择一个，或输入模型 ID（组织/名称）：</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>batchfit::ImportDialog</name>
    <message>
        <source>File:</source>
        <translation>文件：</translation>
    </message>
    <message>
        <source>The imported model replaces the current one. It has no file yet: Save asks for a name.</source>
        <translation>导入的模型将替换当前模型。它还没有对应的文件：保存时会询问文件名。</translation>
    </message>
    <message>
        <source>&amp;Import</source>
        <translation>导入(&amp;I)</translation>
    </message>
</context>
<context>
    <name>batchfit::LayerActivationModel</name>
    <message>
        <source>(input batch)</source>
        <translation>（输入批次）</translation>
    </message>
    <message>
        <source>Layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>Op</source>
        <translation>算子</translation>
    </message>
    <message>
        <source>Saved for backward</source>
        <translation>为反向保存</translation>
    </message>
    <message>
        <source>Output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>% of peak</source>
        <translation>占峰值</translation>
    </message>
    <message>
        <source>Tensors this layer creates that autograd keeps until the backward pass.</source>
        <translation>该层创建、由 autograd 一直保留到反向传播的张量。</translation>
    </message>
    <message>
        <source>Size of the layer&apos;s output tensor (it may be freed if nothing saves it).</source>
        <translation>该层输出张量的大小（若无算子保存它，可能会被释放）。</translation>
    </message>
    <message>
        <source>Saved bytes as a share of the peak allocated memory.</source>
        <translation>保存的字节数占峰值已分配显存的比例。</translation>
    </message>
</context>
<context>
    <name>batchfit::LayerEditor</name>
    <message>
        <source>A layer needs a name.</source>
        <translation>层必须有名称。</translation>
    </message>
    <message>
        <source>Names cannot contain &apos;.&apos;, &apos;[&apos; or &apos;]&apos; (they separate layer paths).</source>
        <translation>名称不能包含“.”“[”或“]”（它们用于分隔层路径）。</translation>
    </message>
    <message>
        <source>Select a layer to edit it, or the input row to change the input shape.</source>
        <translation>选中一层即可编辑；选中“输入”行可修改输入形状。</translation>
    </message>
    <message>
        <source>Per-sample shape, without the batch dimension: e.g. 3, 224, 224 for images or 128 for a sequence of token ids.</source>
        <translation>单个样本的形状，不含批维度：例如图像为 3, 224, 224，长度 128 的 token id 序列为 128。</translation>
    </message>
    <message>
        <source>Element type of the input: float32 for images, int64 for token ids.</source>
        <translation>输入的数据类型：图像用 float32，token id 用 int64。</translation>
    </message>
    <message>
        <source>Input &amp;shape:</source>
        <translation>输入形状(&amp;S)：</translation>
    </message>
    <message>
        <source>Input &amp;dtype:</source>
        <translation>输入类型(&amp;D)：</translation>
    </message>
    <message>
        <source>Input dtype %1</source>
        <translation>输入类型改为 %1</translation>
    </message>
    <message>
        <source>Unique among its siblings; other layers refer to it by this name.</source>
        <translation>在同级层中必须唯一；其他层通过这个名称引用它。</translation>
    </message>
    <message>
        <source>The operation (docs/model-format.md lists each op&apos;s attributes).</source>
        <translation>算子类型（各算子的属性见 docs/model-format.md）。</translation>
    </message>
    <message>
        <source>previous layer</source>
        <translation>上一层</translation>
    </message>
    <message>
        <source>Comma-separated layer names this layer reads (empty: the previous layer&apos;s output; @input is the block&apos;s input).</source>
        <translation>该层读取的层名，用逗号分隔（留空表示上一层的输出；@input 表示模块的输入）。</translation>
    </message>
    <message>
        <source>The op&apos;s attributes; click a value to edit it. Missing ones take PyTorch&apos;s defaults.</source>
        <translation>算子的属性；点击值即可编辑。未列出的属性取 PyTorch 的默认值。</translation>
    </message>
    <message>
        <source>Add an attribute</source>
        <translation>添加属性</translation>
    </message>
    <message>
        <source>Remove the selected attribute (back to its default)</source>
        <translation>删除选中的属性（恢复默认值）</translation>
    </message>
    <message>
        <source>&amp;Name:</source>
        <translation>名称(&amp;N)：</translation>
    </message>
    <message>
        <source>&amp;Op:</source>
        <translation>算子(&amp;O)：</translation>
    </message>
    <message>
        <source>Input&amp;s:</source>
        <translation>输入(&amp;S)：</translation>
    </message>
    <message>
        <source>Change op to %1</source>
        <translation>将算子改为 %1</translation>
    </message>
    <message>
        <source>Set %1</source>
        <translation>设置 %1</translation>
    </message>
    <message>
        <source>Add %1</source>
        <translation>添加 %1</translation>
    </message>
    <message>
        <source>Other…</source>
        <translation>其他…</translation>
    </message>
    <message>
        <source>May be empty: the block then adds only its index to layer paths.</source>
        <translation>可以为空：此时模块在层路径中只体现为序号。</translation>
    </message>
    <message>
        <source>How many times the block runs, each repetition with its own weights (e.g. 32 decoder layers).</source>
        <translation>模块重复的次数，每次重复都有独立的权重（例如 32 个解码器层）。</translation>
    </message>
    <message>
        <source>automatic</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>Index of the first repetition in layer paths (automatic: none for a single block, 0 otherwise).</source>
        <translation>第一次重复在层路径中的序号（自动：只运行一次的模块不加序号，否则从 0 开始）。</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>identity (residual)</source>
        <translation>恒等（残差）</translation>
    </message>
    <message>
        <source>layers (e.g. downsample)</source>
        <translation>若干层（如下采样）</translation>
    </message>
    <message>
        <source>A residual branch from the block&apos;s input, merged with the block&apos;s output.</source>
        <translation>从模块输入引出的残差分支，与模块输出合并。</translation>
    </message>
    <message>
        <source>add</source>
        <translation>相加</translation>
    </message>
    <message>
        <source>concatenate</source>
        <translation>拼接</translation>
    </message>
    <message>
        <source>How the residual branch is merged with the main branch.</source>
        <translation>残差分支与主分支的合并方式。</translation>
    </message>
    <message>
        <source>Per-sample dimension of a concatenating merge.</source>
        <translation>拼接合并所沿的维度（不含批维度）。</translation>
    </message>
    <message>
        <source>Checkpoint as one unit</source>
        <translation>作为一个检查点单元</translation>
    </message>
    <message>
        <source>With &quot;every block&quot; checkpointing, treat this block as one unit even when it runs once.</source>
        <translation>使用“每个模块”检查点时，即使该模块只运行一次，也把它当作一个单元。</translation>
    </message>
    <message>
        <source>&amp;Repeat:</source>
        <translation>重复次数(&amp;R)：</translation>
    </message>
    <message>
        <source>First index:</source>
        <translation>起始序号：</translation>
    </message>
    <message>
        <source>&amp;Shortcut:</source>
        <translation>捷径分支(&amp;S)：</translation>
    </message>
    <message>
        <source>Merge:</source>
        <translation>合并方式：</translation>
    </message>
    <message>
        <source>Merge &amp;dim:</source>
        <translation>合并维度(&amp;D)：</translation>
    </message>
    <message>
        <source>Repeat × %1</source>
        <translation>重复 × %1</translation>
    </message>
    <message>
        <source>First index</source>
        <translation>起始序号</translation>
    </message>
    <message>
        <source>Shortcut: %1</source>
        <translation>捷径分支：%1</translation>
    </message>
    <message>
        <source>Merge: %1</source>
        <translation>合并方式：%1</translation>
    </message>
    <message>
        <source>Merge dim</source>
        <translation>合并维度</translation>
    </message>
    <message>
        <source>Checkpoint block</source>
        <translation>对模块做检查点</translation>
    </message>
    <message>
        <source>Do not checkpoint block</source>
        <translation>不对模块做检查点</translation>
    </message>
    <message>
        <source>Another layer here is already called &apos;%1&apos;.</source>
        <translation>同级已有一层名为“%1”。</translation>
    </message>
    <message>
        <source>Rename to %1</source>
        <translation>重命名为 %1</translation>
    </message>
    <message>
        <source>Input shape: &apos;%1&apos; is not a positive whole number. Write the per-sample dimensions, e.g. 3, 224, 224.</source>
        <translation>输入形状：“%1”不是正整数。请填写单个样本的各维大小，例如 3, 224, 224。</translation>
    </message>
    <message>
        <source>Input shape: give at least one dimension, e.g. 128.</source>
        <translation>输入形状：至少填写一个维度，例如 128。</translation>
    </message>
    <message>
        <source>Input shape %1</source>
        <translation>输入形状改为 %1</translation>
    </message>
    <message>
        <source>Set inputs</source>
        <translation>设置输入</translation>
    </message>
    <message>
        <source>Add attribute</source>
        <translation>添加属性</translation>
    </message>
    <message>
        <source>Attribute name:</source>
        <translation>属性名：</translation>
    </message>
    <message>
        <source>Remove %1</source>
        <translation>删除 %1</translation>
    </message>
    <message>
        <source>unset</source>
        <translation>未设置</translation>
    </message>
    <message>
        <source>%1: %2 was not applied (%3); it stays %4.</source>
        <translation>%1：未采用 %2（%3）；仍为 %4。</translation>
    </message>
    <message>
        <source>The model has a problem: %1</source>
        <translation>模型有问题：%1</translation>
    </message>
</context>
<context>
    <name>batchfit::LayerStackPanel</name>
    <message>
        <source>&amp;Add Layer</source>
        <translation>添加层(&amp;A)</translation>
    </message>
    <message>
        <source>Add a layer after the selected one</source>
        <translation>在选中的层之后添加一层</translation>
    </message>
    <message>
        <source>Dup&amp;licate</source>
        <translation>创建副本(&amp;L)</translation>
    </message>
    <message>
        <source>Duplicate the selected layer or block</source>
        <translation>复制选中的层或模块</translation>
    </message>
    <message>
        <source>&amp;Delete Layer</source>
        <translation>删除层(&amp;D)</translation>
    </message>
    <message>
        <source>Delete the selected layer or block</source>
        <translation>删除选中的层或模块</translation>
    </message>
    <message>
        <source>Move U&amp;p</source>
        <translation>上移(&amp;P)</translation>
    </message>
    <message>
        <source>Move up</source>
        <translation>上移</translation>
    </message>
    <message>
        <source>Move Dow&amp;n</source>
        <translation>下移(&amp;N)</translation>
    </message>
    <message>
        <source>Move down</source>
        <translation>下移</translation>
    </message>
    <message>
        <source>&amp;Wrap in Block</source>
        <translation>放入新模块(&amp;W)</translation>
    </message>
    <message>
        <source>Put the selected layer into a new block</source>
        <translation>把选中的层放进一个新模块</translation>
    </message>
    <message>
        <source>Set Rep&amp;eat…</source>
        <translation>设置重复次数(&amp;E)…</translation>
    </message>
    <message>
        <source>Set how many times the selected block runs</source>
        <translation>设置选中模块的重复次数</translation>
    </message>
    <message>
        <source>Add %1</source>
        <translation>添加 %1</translation>
    </message>
    <message>
        <source>Duplicate</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Wrap in block</source>
        <translation>放入新模块</translation>
    </message>
    <message>
        <source>Set Repeat</source>
        <translation>设置重复次数</translation>
    </message>
    <message>
        <source>Times the block runs:</source>
        <translation>模块重复次数：</translation>
    </message>
    <message>
        <source>Repeat × %1</source>
        <translation>重复 × %1</translation>
    </message>
    <message>
        <source>&amp;Freeze Layers Before This One</source>
        <translation>冻结此层之前的所有层(&amp;F)</translation>
    </message>
    <message>
        <source>Fine-tune from the selected layer on: every layer before it is frozen (requires_grad=False), it and every layer after it train</source>
        <translation>从所选层开始微调：之前的每一层都被冻结（requires_grad=False），所选层及其后的层参与训练</translation>
    </message>
    <message>
        <source>&amp;Train All Layers</source>
        <translation>训练所有层(&amp;T)</translation>
    </message>
    <message>
        <source>Unfreeze every layer (full training)</source>
        <translation>解冻所有层（全量训练）</translation>
    </message>
    <message>
        <source>Train all layers</source>
        <translation>训练所有层</translation>
    </message>
    <message>
        <source>Train %1</source>
        <translation>训练 %1</translation>
    </message>
    <message>
        <source>Freeze %1</source>
        <translation>冻结 %1</translation>
    </message>
    <message>
        <source>Freeze layers before %1</source>
        <translation>冻结 %1 之前的层</translation>
    </message>
</context>
<context>
    <name>batchfit::LayerTreeModel</name>
    <message>
        <source>scalar</source>
        <translation>标量</translation>
    </message>
    <message>
        <source>input</source>
        <translation>输入</translation>
    </message>
    <message>
        <source>shortcut</source>
        <translation>捷径分支</translation>
    </message>
    <message>
        <source>residual branch</source>
        <translation>残差分支</translation>
    </message>
    <message>
        <source>(unnamed)</source>
        <translation>（未命名）</translation>
    </message>
    <message>
        <source>attention</source>
        <translation>注意力</translation>
    </message>
    <message>
        <source>MLP</source>
        <translation>MLP</translation>
    </message>
    <message>
        <source>%1 (after merge)</source>
        <translation>%1（合并后）</translation>
    </message>
    <message>
        <source>block × %1</source>
        <translation>模块 × %1</translation>
    </message>
    <message>
        <source>block</source>
        <translation>模块</translation>
    </message>
    <message>
        <source>, residual</source>
        <translation>，残差</translation>
    </message>
    <message>
        <source>%1 saved for the backward pass at batch %2 (%3 of the peak); blocks and repeated layers show the sum over their layers and repetitions.</source>
        <translation>批大小为 %2 时为反向传播保存了 %1（占峰值的 %3）；模块和重复的层显示其所有层、所有重复次数的合计。</translation>
    </message>
    <message>
        <source>Shape of the layer&apos;s output tensor (B = batch size); %1 at batch %2 (first repetition).</source>
        <translation>该层输出张量的形状（B 为批大小）；批大小为 %2 时占 %1（取第一次重复）。</translation>
    </message>
    <message>
        <source>Parameters of this layer: tied weights count once, at their first use; buffers such as running statistics are not counted. Blocks show the sum over their layers and repetitions.</source>
        <translation>该层的参数量：共享（绑定）的权重只在首次使用处计一次；不计运行统计量等缓冲区。模块显示其各层及各次重复的总和。</translation>
    </message>
    <message>
        <source>The per-sample input: shape without the batch dimension, and its dtype. Select it to edit.</source>
        <translation>单个样本的输入：不含批维度的形状及数据类型。选中即可编辑。</translation>
    </message>
    <message>
        <source>Layers on the residual branch, merged with the block&apos;s output (e.g. ResNet&apos;s downsample).</source>
        <translation>残差分支上的层，与模块输出合并（例如 ResNet 的下采样）。</translation>
    </message>
    <message numerus="yes">
        <source>A block of layers. It runs %n time(s), each repetition with its own weights.</source>
        <translation>
            <numerusform>由若干层组成的模块，共运行 %n 次，每次重复都有独立的权重。</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 Runs after the residual merge.</source>
        <translation>%1 在残差合并之后运行。</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数量</translation>
    </message>
    <message>
        <source>Activations</source>
        <translation>前向激活</translation>
    </message>
    <message>
        <source>% of peak</source>
        <translation>占峰值</translation>
    </message>
    <message>
        <source>Input: per-sample shape. Layers: output tensor size at the current batch.</source>
        <translation>输入行：单个样本的形状。其他层：当前批大小下输出张量的大小。</translation>
    </message>
    <message>
        <source>Forward activations the layer saves for the backward pass at the current batch.</source>
        <translation>当前批大小下，该层在前向传播中为反向传播保存的激活。</translation>
    </message>
    <message>
        <source>Those activations as a share of the peak allocated memory.</source>
        <translation>这些激活占峰值已分配显存的比例。</translation>
    </message>
    <message>
        <source>Trains: %1 parameters get gradients and optimizer states. Untick to freeze (requires_grad=False).</source>
        <translation>参与训练：%1 个参数有反向梯度和优化器状态。取消勾选即冻结（requires_grad=False）。</translation>
    </message>
    <message>
        <source>Frozen (requires_grad=False): no gradient, no optimizer state, and layers before the first trainable one save nothing for backward. Tick to train it.</source>
        <translation>已冻结（requires_grad=False）：没有梯度，没有优化器状态；第一个可训练层之前的层不为反向传播保存任何前向激活。勾选即参与训练。</translation>
    </message>
    <message>
        <source>%1 of %2 parameters train; the others are frozen.</source>
        <translation>%2 个参数中 %1 个参与训练，其余已冻结。</translation>
    </message>
    <message>
        <source>Trains</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>Ticked: the layer&apos;s parameters train. Unticked: frozen (fine-tuning), as requires_grad=False.</source>
        <translation>勾选：该层参数参与训练。未勾选：冻结（微调），即 requires_grad=False。</translation>
    </message>
</context>
<context>
    <name>batchfit::LeverModel</name>
    <message>
        <source>Gradient checkpointing of every block</source>
        <translation>对每个模块做梯度检查点</translation>
    </message>
    <message>
        <source>bf16 mixed precision (autocast)</source>
        <translation>bf16 混合精度（autocast）</translation>
    </message>
    <message>
        <source>8-bit Adam (bitsandbytes)</source>
        <translation>8 位 Adam（bitsandbytes）</translation>
    </message>
    <message>
        <source>SGD with momentum instead of Adam</source>
        <translation>用带动量的 SGD 代替 Adam</translation>
    </message>
    <message>
        <source>Offload optimizer states to CPU</source>
        <translation>把优化器状态卸载到 CPU</translation>
    </message>
    <message>
        <source>Smaller micro-batches with gradient accumulation (×%1)</source>
        <translation>更小的微批次 + 梯度累积（×%1）</translation>
    </message>
    <message>
        <source>≈+33% compute</source>
        <translation>计算量约增加 33%</translation>
    </message>
    <message>
        <source>needs bf16 hardware (Ampere or newer)</source>
        <translation>需要支持 bf16 的硬件（Ampere 及更新架构）</translation>
    </message>
    <message>
        <source>small accuracy risk</source>
        <translation>精度略有风险</translation>
    </message>
    <message>
        <source>may need retuning</source>
        <translation>可能需要重新调参</translation>
    </message>
    <message>
        <source>slower optimizer step</source>
        <translation>优化器更新变慢</translation>
    </message>
    <message>
        <source>%1 micro-steps per update</source>
        <translation>每次更新需 %1 个微步</translation>
    </message>
    <message>
        <source>Keep only each block&apos;s input in the forward pass and recompute the rest during the backward pass.</source>
        <translation>前向时只保留每个模块的输入，其余激活在反向传播时重新计算。</translation>
    </message>
    <message>
        <source>Run matrix multiplications in bfloat16 and save half-size activations.</source>
        <translation>矩阵乘法用 bfloat16 计算，保存的激活只占一半大小。</translation>
    </message>
    <message>
        <source>Store Adam&apos;s two moments in 8 bits instead of 32.</source>
        <translation>把 Adam 的两个矩从 32 位改为 8 位存储。</translation>
    </message>
    <message>
        <source>One state tensor per parameter instead of Adam&apos;s two.</source>
        <translation>每个参数只需一个状态张量，而 Adam 需要两个。</translation>
    </message>
    <message>
        <source>Keep optimizer states and master weights in host memory.</source>
        <translation>把优化器状态和主权重放在主机内存中。</translation>
    </message>
    <message>
        <source>Split each update into micro-batches; the batch column counts samples per update.</source>
        <translation>每次更新拆成多个微批次；“最大批”一列按每次更新的样本数计算。</translation>
    </message>
    <message>
        <source>now fits</source>
        <translation>现在放得下</translation>
    </message>
    <message>
        <source>still does not fit</source>
        <translation>仍然放不下</translation>
    </message>
    <message>
        <source>×%1</source>
        <translation>×%1</translation>
    </message>
    <message>
        <source>Change</source>
        <translation>调整</translation>
    </message>
    <message>
        <source>Largest batch</source>
        <translation>最大批</translation>
    </message>
    <message>
        <source>vs now</source>
        <translation>对比当前</translation>
    </message>
    <message>
        <source>Largest batch per optimizer update (micro-batch × accumulation steps) that fits with this change.</source>
        <translation>采用这项调整后，每次优化器更新能放下的最大批（微批次 × 累积步数）。</translation>
    </message>
    <message>
        <source>cost: %1</source>
        <translation>代价：%1</translation>
    </message>
    <message>
        <source>Fused optimizer (fused=True)</source>
        <translation>融合优化器（fused=True）</translation>
    </message>
    <message>
        <source>none (CUDA, torch 2.0 or newer)</source>
        <translation>无（CUDA，torch 2.0 及以上）</translation>
    </message>
    <message>
        <source>One kernel updates every parameter: no foreach copy of the parameters during step().</source>
        <translation>一个内核更新全部参数：step() 期间没有 foreach 的参数副本。</translation>
    </message>
    <message>
        <source>LoRA r=16 on attention, bf16 weights</source>
        <translation>注意力层上 LoRA r=16，bf16 权重</translation>
    </message>
    <message>
        <source>fine-tunes adapters only</source>
        <translation>只微调适配器</translation>
    </message>
    <message>
        <source>Freeze the model and train small adapters (PEFT&apos;s default targets, r=16, alpha 32, dropout 0.05): no gradients or optimizer states for the base weights.</source>
        <translation>冻结模型，只训练小的适配器（PEFT 的默认目标层，r=16，alpha 32，dropout 0.05）：基础权重没有反向梯度，也没有优化器状态。</translation>
    </message>
    <message>
        <source>Freeze the backbone, train only %1</source>
        <translation>冻结主干，只训练 %1</translation>
    </message>
    <message>
        <source>fine-tunes the head only</source>
        <translation>只微调输出头</translation>
    </message>
    <message>
        <source>Every layer but the output head is frozen (requires_grad=False): no gradients or optimizer states for them, and nothing before the head is saved for the backward pass.</source>
        <translation>除输出头外的所有层都被冻结（requires_grad=False）：它们没有反向梯度和优化器状态，输出头之前的层不为反向传播保存任何前向激活。</translation>
    </message>
    <message>
        <source>QLoRA: 4-bit NF4 base weights with LoRA r=16</source>
        <translation>QLoRA：4 位 NF4 基座权重加 LoRA r=16</translation>
    </message>
    <message>
        <source>Load the linear layers in 4 bits (bitsandbytes NF4, double quantization) and train LoRA adapters on them: 0.52 bytes per base weight, the rest in fp32, bf16 compute and checkpointing every block (prepare_model_for_kbit_training).</source>
        <translation>以 4 位加载线性层（bitsandbytes NF4，双重量化），在其上训练 LoRA 适配器：每个基座权重 0.52 字节，其余权重为 fp32，bf16 计算，每个块做梯度检查点（prepare_model_for_kbit_training）。</translation>
    </message>
    <message>
        <source>ZeRO-2 on these GPUs</source>
        <translation>在这些 GPU 上用 ZeRO-2</translation>
    </message>
    <message>
        <source>FSDP full shard</source>
        <translation>FSDP 完全分片</translation>
    </message>
    <message>
        <source>%1 GPUs instead of %2</source>
        <translation>用 %1 张 GPU 代替 %2 张</translation>
    </message>
    <message>
        <source>reduce-scatter instead of all-reduce</source>
        <translation>用 reduce-scatter 代替 all-reduce</translation>
    </message>
    <message>
        <source>an all-gather per block, forward and backward</source>
        <translation>每个模块在前向和反向各做一次 all-gather</translation>
    </message>
    <message>
        <source>twice the GPUs</source>
        <translation>GPU 数量翻倍</translation>
    </message>
    <message>
        <source>Each GPU keeps its shard of the optimizer states and gradients (DeepSpeed ZeRO stage 2); the micro-batch is per GPU.</source>
        <translation>每张 GPU 只保存自己那一份优化器状态和梯度（DeepSpeed ZeRO 第 2 阶段）；微批大小按每张 GPU 计。</translation>
    </message>
    <message>
        <source>Shard the parameters too: each block&apos;s parameters are gathered only while it runs (FSDP FULL_SHARD).</source>
        <translation>参数也分片：每个模块的参数只在它运行时才聚合（FSDP FULL_SHARD）。</translation>
    </message>
    <message>
        <source>The same strategy on twice as many GPUs: every shard halves.</source>
        <translation>同样的策略用两倍的 GPU：每个分片减半。</translation>
    </message>
    <message>
        <source>Tensor parallel TP = 2</source>
        <translation>张量并行 TP = 2</translation>
    </message>
    <message>
        <source>an all-reduce per layer, forward and backward</source>
        <translation>每层在前向和反向各做一次 all-reduce</translation>
    </message>
    <message>
        <source>Megatron tensor parallelism over pairs of GPUs: each holds half of every layer&apos;s heads and MLP columns, and half of the vocabulary; half as many data-parallel replicas.</source>
        <translation>在每两张 GPU 上做 Megatron 张量并行：每张 GPU 持有每层一半的注意力头和 MLP 列，以及一半的词表；数据并行副本数减半。</translation>
    </message>
    <message>
        <source>Expandable segments (PYTORCH_CUDA_ALLOC_CONF)</source>
        <translation>可扩展内存段（PYTORCH_CUDA_ALLOC_CONF）</translation>
    </message>
    <message>
        <source>none (PyTorch 2.1 or newer)</source>
        <translation>无（需 PyTorch 2.1 或更新版本）</translation>
    </message>
    <message>
        <source>Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True before starting Python: the caching allocator grows one address range per pool instead of fixed segments, so freed blocks merge and the cache fragments less.</source>
        <translation>启动 Python 前设置 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True：缓存分配器为每个内存池扩展一段连续地址，而不是分配固定的内存段，释放的块可以合并，缓存的碎片更少。</translation>
    </message>
    <message>
        <source>DeepSpeed ZeRO-3</source>
        <translation>DeepSpeed ZeRO-3</translation>
    </message>
    <message>
        <source>an all-gather per layer, forward and backward</source>
        <translation>前向和反向时每层一次 all-gather</translation>
    </message>
    <message>
        <source>DeepSpeed ZeRO stage 3: each GPU keeps its shard of the parameters, gradients and optimizer states; a layer&apos;s parameters are gathered while it runs.</source>
        <translation>DeepSpeed ZeRO 第 3 阶段：每张 GPU 只保存参数、梯度和优化器状态的一个分片；某一层运行时才聚合它的参数。</translation>
    </message>
    <message>
        <source>saves %1</source>
        <translation>节省 %1</translation>
    </message>
    <message>
        <source>saves nothing</source>
        <translation>不节省</translation>
    </message>
    <message>
        <source>TRL&apos;s fused LM head (SFTTrainer&apos;s loss, TRL 1.15+)</source>
        <translation>TRL 融合输出头（SFTTrainer 的损失，TRL 1.15+）</translation>
    </message>
    <message>
        <source>train with TRL&apos;s SFTTrainer (or a fused linear cross-entropy)</source>
        <translation>用 TRL 的 SFTTrainer 训练（或融合线性交叉熵）</translation>
    </message>
    <message>
        <source>The same loss without the whole [tokens x vocabulary] logits: the head is projected and folded in tiles, as TRL&apos;s SFTTrainer does by default.</source>
        <translation>同样的损失，但不生成完整的 [token × 词表] logits：输出头按块投影并折叠计算，这是 TRL 的 SFTTrainer 的默认做法。</translation>
    </message>
    <message>
        <source>Offload the checkpointed layers&apos; inputs to host memory</source>
        <translation>把检查点层的输入卸载到主机内存</translation>
    </message>
    <message>
        <source>%1 of host memory, %2 over PCIe per step</source>
        <translation>占用主机内存 %1，每步 PCIe 传输 %2</translation>
    </message>
    <message>
        <source>Each checkpointed layer&apos;s input waits in pinned host memory instead of on the GPU (transformers: activation_checkpointing_kwargs={&quot;offload&quot;: True}); it comes back for the layer&apos;s recomputation.</source>
        <translation>每个检查点层的输入存放在锁页主机内存而不是 GPU 上（transformers：activation_checkpointing_kwargs={&quot;offload&quot;: True}）；重计算该层时再拷回。</translation>
    </message>
    <message>
        <source>Offload parameter shards to host memory (ZeRO-3 offload_param / FSDP CPUOffload)</source>
        <translation>把参数分片卸载到主机内存（ZeRO-3 offload_param / FSDP CPUOffload）</translation>
    </message>
    <message>
        <source>Each GPU&apos;s parameter and gradient shards live in host memory and the optimizer steps there; a block&apos;s parameters are copied to the GPU and gathered only while it runs.</source>
        <translation>每张 GPU 的参数分片和梯度分片存放在主机内存中，优化器在那里更新；一个模块的参数只在它运行时拷到 GPU 并聚合。</translation>
    </message>
    <message>
        <source>Precompute DPO&apos;s reference log-probabilities</source>
        <translation>预先计算 DPO 的参考对数概率</translation>
    </message>
    <message>
        <source>one inference pass over the data set before training</source>
        <translation>训练前对数据集做一遍推理</translation>
    </message>
    <message>
        <source>precompute_ref_log_probs=True: the reference log-probabilities are computed once before training, so no step runs the reference forward or keeps a frozen copy of the model.</source>
        <translation>precompute_ref_log_probs=True：参考对数概率在训练前计算一次，之后每一步既不运行参考模型的前向，也不在显存里保留模型的冻结副本。</translation>
    </message>
    <message>
        <source>GRPO without the reference (beta=0.0)</source>
        <translation>GRPO 不用参考模型（beta=0.0）</translation>
    </message>
    <message>
        <source>no KL penalty in the loss</source>
        <translation>损失中不再有 KL 惩罚</translation>
    </message>
    <message>
        <source>beta=0.0, TRL&apos;s default: no reference model is loaded, so neither its log-probabilities nor a frozen copy of the model are on the GPU.</source>
        <translation>beta=0.0，TRL 的默认值：不加载参考模型，因此 GPU 上既不计算其对数概率，也不保存模型的冻结副本。</translation>
    </message>
    <message>
        <source>LoRA without DoRA (use_dora=False)</source>
        <translation>不用 DoRA 的普通 LoRA（use_dora=False）</translation>
    </message>
    <message>
        <source>plain LoRA adapters</source>
        <translation>普通 LoRA 适配器</translation>
    </message>
    <message>
        <source>use_dora=False on the same targets: no magnitude vectors, no weight norms recomputed in each forward, and neither the base output nor the adapter output kept for the backward.</source>
        <translation>在相同目标层上设 use_dora=False：没有幅度向量，每次前向不再重算权重的行范数，也不再为反向保留基础层输出和适配器输出。</translation>
    </message>
</context>
<context>
    <name>batchfit::LoraEditor</name>
    <message>
        <source>full training</source>
        <translation>全量训练</translation>
    </message>
    <message>
        <source>LoRA adapters</source>
        <translation>LoRA 适配器</translation>
    </message>
    <message>
        <source>Fine-tuning:</source>
        <translation>微调：</translation>
    </message>
    <message>
        <source>LoRA rank r: each adapted linear gets r × (in + out) trainable parameters</source>
        <translation>LoRA 秩 r：每个适配的线性层增加 r × (输入 + 输出) 个可训练参数</translation>
    </message>
    <message>
        <source>lora_alpha: the adapter output is scaled by α / r (no effect on memory)</source>
        <translation>lora_alpha：适配器输出乘以 α / r（不影响显存）</translation>
    </message>
    <message>
        <source>drop </source>
        <translation>丢弃 </translation>
    </message>
    <message>
        <source>lora_dropout: each adapted linear keeps its own dropout mask and dropped copy of its input; 0 keeps nothing</source>
        <translation>lora_dropout：每个适配的线性层各自保存 dropout 掩码和输入的丢弃副本；0 则不保存</translation>
    </message>
    <message>
        <source>LoRA:</source>
        <translation>LoRA：</translation>
    </message>
    <message>
        <source>default: PEFT&apos;s for the model family</source>
        <translation>默认：PEFT 为该模型系列设定的目标层</translation>
    </message>
    <message>
        <source>target_modules: comma-separated linear names (q_proj,v_proj), or all-linear; a linear is adapted when its path is a name or ends with &quot;.name&quot;</source>
        <translation>target_modules：逗号分隔的线性层名称（q_proj,v_proj），或 all-linear；线性层的路径等于某个名称或以“.名称”结尾时被适配</translation>
    </message>
    <message>
        <source>LoRA targets:</source>
        <translation>LoRA 目标层：</translation>
    </message>
    <message>
        <source>LoRA r=%1</source>
        <translation>LoRA r=%1</translation>
    </message>
    <message>
        <source>Full training</source>
        <translation>全量训练</translation>
    </message>
    <message>
        <source>LoRA alpha %1</source>
        <translation>LoRA alpha %1</translation>
    </message>
    <message>
        <source>LoRA dropout %1</source>
        <translation>LoRA dropout %1</translation>
    </message>
    <message>
        <source>LoRA targets</source>
        <translation>LoRA 目标层</translation>
    </message>
    <message>
        <source>Pick the targets among the model&apos;s linear layers</source>
        <translation>从模型的线性层中选择目标层</translation>
    </message>
    <message>
        <source>all-linear (every linear but the output head)</source>
        <translation>all-linear（除输出头外的所有线性层）</translation>
    </message>
    <message>
        <source>PEFT&apos;s default (%1)</source>
        <translation>PEFT 默认（%1）</translation>
    </message>
    <message>
        <source>no PEFT default for this model: pick targets</source>
        <translation>PEFT 对该模型没有默认目标层：请选择</translation>
    </message>
    <message>
        <source>default: %1</source>
        <translation>默认：%1</translation>
    </message>
    <message>
        <source>QLoRA (4-bit base weights)</source>
        <translation>QLoRA（4 位基座权重）</translation>
    </message>
    <message>
        <source>LoRA (PEFT): small trainable adapters on the chosen linears, everything else frozen. QLoRA: the same on linears that bitsandbytes stores in 4 bits. Freeze layers by hand from the layer tree&apos;s Trains column.</source>
        <translation>LoRA（PEFT）：在选定的线性层上加小的可训练适配器，其余全部冻结。QLoRA：同样的做法，但线性层由 bitsandbytes 以 4 位存储。也可以在层树的“训练”列中手动冻结层。</translation>
    </message>
    <message>
        <source>bitsandbytes storage of every linear but the output head: NF4/FP4 keep two 4-bit codes per byte and an fp32 absmax per 64 weights (0.5625 B/param); int8 (LLM.int8) one byte and a scale per row. The matmul dequantizes its weight on the fly.</source>
        <translation>bitsandbytes 对除输出头以外的每个线性层的存储方式：NF4/FP4 每字节两个 4 位编码，每 64 个权重一个 fp32 absmax（0.5625 字节/参数）；int8（LLM.int8）每个权重一字节，每行一个缩放因子。矩阵乘法时临时反量化权重。</translation>
    </message>
    <message>
        <source>double quant</source>
        <translation>双重量化</translation>
    </message>
    <message>
        <source>bnb_4bit_use_double_quant: the absmax themselves in 8 bits (0.5159 B/param)</source>
        <translation>bnb_4bit_use_double_quant：absmax 本身再量化为 8 位（0.5159 字节/参数）</translation>
    </message>
    <message>
        <source>compute %1</source>
        <translation>计算 %1</translation>
    </message>
    <message>
        <source>bnb_4bit_compute_dtype: used for fp16 inputs (bitsandbytes computes fp32 and bf16 inputs in their own dtype)</source>
        <translation>bnb_4bit_compute_dtype：用于 fp16 输入（fp32 和 bf16 输入时 bitsandbytes 按输入本身的类型计算）</translation>
    </message>
    <message>
        <source>Quantization:</source>
        <translation>量化：</translation>
    </message>
    <message>
        <source>prepare_model_for_kbit_training (fp32 other weights)</source>
        <translation>prepare_model_for_kbit_training（其余权重为 fp32）</translation>
    </message>
    <message>
        <source>PEFT&apos;s prepare_model_for_kbit_training: every weight that is not quantized (embeddings, norms, the head) becomes fp32, and gradient checkpointing is turned on.</source>
        <translation>PEFT 的 prepare_model_for_kbit_training：所有未量化的权重（嵌入、归一化层、输出头）转为 fp32，并开启梯度检查点。</translation>
    </message>
    <message>
        <source>Quantization %1</source>
        <translation>量化 %1</translation>
    </message>
    <message>
        <source>Double quantization on</source>
        <translation>开启双重量化</translation>
    </message>
    <message>
        <source>Double quantization off</source>
        <translation>关闭双重量化</translation>
    </message>
    <message>
        <source>Compute dtype %1</source>
        <translation>计算类型 %1</translation>
    </message>
    <message>
        <source>Prepare for k-bit training</source>
        <translation>为 k 位训练做准备</translation>
    </message>
    <message>
        <source>No k-bit preparation</source>
        <translation>不做 k 位训练准备</translation>
    </message>
    <message>
        <source>QLoRA r=%1</source>
        <translation>QLoRA r=%1</translation>
    </message>
    <message>
        <source>DoRA</source>
        <translation>DoRA</translation>
    </message>
    <message>
        <source>use_dora: weight-decomposed LoRA. Each forward recomputes the row norms of W + BA in the adapters&apos; dtype (an in × in identity and weight-sized products, briefly) and keeps the base output and the adapter output of every adapted linear for the backward</source>
        <translation>use_dora：权重分解的 LoRA（DoRA）。每次前向都以适配器的数据类型重新计算 W + BA 的行范数（短暂占用一个 in × in 单位矩阵和若干与权重同大小的张量），并为反向保留每个适配层的基础层输出和适配器输出</translation>
    </message>
    <message>
        <source>DoRA on</source>
        <translation>开启 DoRA</translation>
    </message>
    <message>
        <source>DoRA off</source>
        <translation>关闭 DoRA</translation>
    </message>
</context>
<context>
    <name>batchfit::MainWindow</name>
    <message>
        <source>estimating…</source>
        <translation>正在估算…</translation>
    </message>
    <message>
        <source>Apply: %1</source>
        <translation>应用：%1</translation>
    </message>
    <message>
        <source>Hide this hint</source>
        <translation>隐藏此提示</translation>
    </message>
    <message>
        <source>Brea&amp;kdown</source>
        <translation>显存构成(&amp;K)</translation>
    </message>
    <message>
        <source>Step &amp;timeline</source>
        <translation>单步时间线(&amp;T)</translation>
    </message>
    <message>
        <source>Per-&amp;layer activations</source>
        <translation>逐层激活(&amp;L)</translation>
    </message>
    <message>
        <source>Layer Stack</source>
        <translation>网络层</translation>
    </message>
    <message>
        <source>Training Set-up</source>
        <translation>训练配置</translation>
    </message>
    <message>
        <source>What Would Help?</source>
        <translation>优化建议</translation>
    </message>
    <message>
        <source>%1[*] — BatchFit</source>
        <translation>%1[*] — BatchFit</translation>
    </message>
    <message>
        <source>Export Report</source>
        <translation>导出报告</translation>
    </message>
    <message>
        <source>Cannot Export Report</source>
        <translation>无法导出报告</translation>
    </message>
    <message>
        <source>Report written to %1</source>
        <translation>报告已保存到 %1</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>BatchFit will use %1 the next time it starts.</source>
        <translation>BatchFit 下次启动时将使用%1。</translation>
    </message>
    <message>
        <source>Restart Now</source>
        <translation>立即重启</translation>
    </message>
    <message>
        <source>Later</source>
        <translation>稍后</translation>
    </message>
    <message>
        <source>About BatchFit</source>
        <translation>关于 BatchFit</translation>
    </message>
    <message>
        <source>&lt;h3&gt;BatchFit %1&lt;/h3&gt;&lt;p&gt;How much GPU memory one training step needs, and the largest batch that fits — before you spend a GPU-hour.&lt;/p&gt;</source>
        <translation>&lt;h3&gt;BatchFit %1&lt;/h3&gt;&lt;p&gt;在花掉一小时 GPU 之前，先算清楚训练一步需要多少显存、最大能放下多大的批。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;New Model</source>
        <translation>新建模型(&amp;N)</translation>
    </message>
    <message>
        <source>&amp;Open…</source>
        <translation>打开(&amp;O)…</translation>
    </message>
    <message>
        <source>Open &amp;Recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Save</source>
        <translation>保存(&amp;S)</translation>
    </message>
    <message>
        <source>Save &amp;As…</source>
        <translation>另存为(&amp;A)…</translation>
    </message>
    <message>
        <source>&amp;Export Report…</source>
        <translation>导出报告(&amp;E)…</translation>
    </message>
    <message>
        <source>This build has no report support.</source>
        <translation>此版本未包含报告功能。</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Edit</source>
        <translation>编辑(&amp;E)</translation>
    </message>
    <message>
        <source>&amp;Undo</source>
        <translation>撤销(&amp;U)</translation>
    </message>
    <message>
        <source>&amp;Redo</source>
        <translation>重做(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Model</source>
        <translation>模型(&amp;M)</translation>
    </message>
    <message>
        <source>&amp;Presets</source>
        <translation>预设模型(&amp;P)</translation>
    </message>
    <message>
        <source>&amp;Largest Batch That Fits</source>
        <translation>能放下的最大批(&amp;L)</translation>
    </message>
    <message>
        <source>Jump to the largest batch size that fits</source>
        <translation>跳到能放下的最大批大小</translation>
    </message>
    <message>
        <source>Focus &amp;Batch Size</source>
        <translation>定位到批大小(&amp;B)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Logarithmic Batch Axis</source>
        <translation>批大小对数坐标(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;About BatchFit</source>
        <translation>关于 BatchFit(&amp;A)</translation>
    </message>
    <message>
        <source>About &amp;Qt</source>
        <translation>关于 &amp;Qt</translation>
    </message>
    <message>
        <source>Bottom to top: what is live at the peak of one training step, then the overheads.</source>
        <translation>自下而上：训练一步峰值时刻驻留的各部分，然后是额外开销。</translation>
    </message>
    <message>
        <source>custom %1 GiB</source>
        <translation>自定义 %1 GiB</translation>
    </message>
    <message>
        <source>Fix the model first: the levers are evaluated on a valid model.</source>
        <translation>请先修正模型：优化建议只能基于有效的模型计算。</translation>
    </message>
    <message>
        <source>&amp;Import</source>
        <translation>导入(&amp;I)</translation>
    </message>
    <message>
        <source>&amp;Hugging Face Config…</source>
        <translation>Hugging Face 配置(&amp;H)…</translation>
    </message>
    <message>
        <source>Hugging Face Model from the &amp;Cache…</source>
        <translation>从本地 Hugging Face 缓存导入模型(&amp;C)…</translation>
    </message>
    <message>
        <source>&amp;ONNX Model…</source>
        <translation>ONNX 模型(&amp;O)…</translation>
    </message>
    <message>
        <source>Load &amp;Measurements…</source>
        <translation>加载实测数据(&amp;M)…</translation>
    </message>
    <message>
        <source>Load Measurements</source>
        <translation>加载实测数据</translation>
    </message>
    <message>
        <source>Measurements (*.json);;All files (*)</source>
        <translation>实测数据 (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Show points measured by tools/torch_measure.py on the chart</source>
        <translation>在图表上显示 tools/torch_measure.py 测得的数据点</translation>
    </message>
    <message>
        <source>Clear Measu&amp;rements</source>
        <translation>清除实测数据(&amp;R)</translation>
    </message>
    <message>
        <source>Copy &amp;Chart to Clipboard</source>
        <translation>复制图表到剪贴板(&amp;C)</translation>
    </message>
    <message>
        <source>Chart copied to the clipboard.</source>
        <translation>图表已复制到剪贴板。</translation>
    </message>
    <message>
        <source>Copy as CLI C&amp;ommand</source>
        <translation>复制为命令行(&amp;O)</translation>
    </message>
    <message>
        <source>Copy the batchfit-cli command line that estimates this model with this set-up.</source>
        <translation>复制用当前模型和配置做估算的 batchfit-cli 命令行。</translation>
    </message>
    <message>
        <source>Save the model first: the command line names its file.</source>
        <translation>请先保存模型：命令行要写明模型文件。</translation>
    </message>
    <message>
        <source>Copied: %1</source>
        <translation>已复制：%1</translation>
    </message>
    <message>
        <source>GPU: %1</source>
        <translation>GPU：%1</translation>
    </message>
    <message>
        <source>(no CLI option for: %1)</source>
        <translation>（命令行没有对应选项：%1）</translation>
    </message>
    <message>
        <source>(unsaved edits are not in the file)</source>
        <translation>（未保存的修改不在文件中）</translation>
    </message>
    <message>
        <source>Welcome: %1 is loaded. Drag the batch slider to see what fits your GPU; other models are under Model → Presets and File → Open; edit layers on the left; ask “What would help?” on the right.</source>
        <translation>欢迎使用：已加载 %1。拖动批大小滑块，看看你的 GPU 放得下多大的批；在“模型 → 预设模型”或“文件 → 打开”中换一个模型；在左侧编辑网络层；在右侧查看“优化建议”。</translation>
    </message>
    <message>
        <source>No estimate at batch %1: %2</source>
        <translation>批大小 %1 无法估算：%2</translation>
    </message>
    <message>
        <source>&amp;Documentation</source>
        <translation>文档(&amp;D)</translation>
    </message>
    <message>
        <source>How BatchFit counts memory, its file formats and its accuracy (offline)</source>
        <translation>BatchFit 如何计算显存、文件格式与精度（离线）</translation>
    </message>
    <message>
        <source>log batch axis</source>
        <translation>批大小对数轴</translation>
    </message>
    <message>
        <source>Batch sizes in powers of two (Ctrl+L)</source>
        <translation>批大小按 2 的幂排列（Ctrl+L）</translation>
    </message>
    <message>
        <source>log memory axis</source>
        <translation>显存对数轴</translation>
    </message>
    <message>
        <source>Memory in powers of two: a model far larger than the GPU stays readable (Ctrl+Shift+L)</source>
        <translation>显存按 2 的幂排列：远超 GPU 容量的模型也清晰可读（Ctrl+Shift+L）</translation>
    </message>
    <message>
        <source>Logarithmic &amp;Memory Axis</source>
        <translation>显存对数轴(&amp;M)</translation>
    </message>
    <message>
        <source>Every catalogue GPU at the current set-up. Double-click one to use it.</source>
        <translation>当前设置下目录中的每块 GPU。双击即可改用。</translation>
    </message>
    <message>
        <source>&amp;Which GPUs fit</source>
        <translation>哪些 GPU 放得下(&amp;W)</translation>
    </message>
    <message>
        <source>The measured points sit at the bottom of this memory axis: the log memory axis beside the chart spreads them.</source>
        <translation>实测点挤在这条显存轴的底部：勾选图表旁的“显存对数轴”即可把它们展开。</translation>
    </message>
    <message>
        <source>%1 parameters</source>
        <translation>%1 个参数</translation>
    </message>
    <message>
        <source>%1 of %2 parameters trainable</source>
        <translation>%2 个参数中 %1 个可训练</translation>
    </message>
    <message>
        <source>%1 · %2 · %3 · lowered in %4 ms</source>
        <translation>%1 · %2 · %3 · 建模耗时 %4 毫秒</translation>
    </message>
    <message>
        <source>No batch × sequence map: %1</source>
        <translation>无法生成批大小 × 序列长度图：%1</translation>
    </message>
    <message>
        <source>The batch × sequence map is for language models, whose input is a sequence of token ids (a Hugging Face import, the GPT-2 and Llama presets). This model&apos;s input is %1 %2: its sequence length is not a batch axis.</source>
        <translation>批大小 × 序列长度图用于输入为 token id 序列的语言模型（Hugging Face 导入、GPT-2 和 Llama 预设）。此模型的输入是 %1 %2：它没有可以调节的序列长度。</translation>
    </message>
    <message>
        <source>Micro-batch size against sequence length on the GPU chosen: each cell green where it fits (darker: more of the usable memory), red where it does not.</source>
        <translation>在所选 GPU 上，微批大小对序列长度：放得下的格子为绿色（越深占用的可用显存越多），放不下的为红色。</translation>
    </message>
    <message>
        <source>Batch × se&amp;quence</source>
        <translation>批大小 × 序列长度(&amp;Q)</translation>
    </message>
    <message>
        <source>Segments</source>
        <translation>内存段</translation>
    </message>
    <message>
        <source>Caching Allocator &amp;Segments</source>
        <translation>缓存分配器内存段(&amp;S)</translation>
    </message>
    <message>
        <source>The model or its training set-up has a problem, so the chart shows the last valid estimate: %1</source>
        <translation>模型或其训练配置有问题，图表显示的是上一次有效的估算：%1</translation>
    </message>
    <message>
        <source>no estimate: the model or its set-up has a problem</source>
        <translation>无估算：模型或其配置有问题</translation>
    </message>
    <message>
        <source>&amp;Training</source>
        <translation>训练(&amp;T)</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>Serving</source>
        <translation>推理部署</translation>
    </message>
    <message>
        <source>Training: one training step and the largest batch (Ctrl+1). Serving: how many requests fit beside the weights, as vLLM, SGLang or generate() size their KV cache (Ctrl+2).</source>
        <translation>训练：一步训练的显存和能放下的最大批（Ctrl+1）。推理部署：按 vLLM、SGLang 或 generate() 分配 KV 缓存的方式，算出权重旁边还能同时放下多少请求（Ctrl+2）。</translation>
    </message>
    <message>
        <source>Se&amp;rving</source>
        <translation>推理部署(&amp;R)</translation>
    </message>
    <message>
        <source>Open a decoder&apos;s config.json in serving mode first.</source>
        <translation>请先在推理部署模式下打开解码器模型的 config.json。</translation>
    </message>
    <message>
        <source>Export Serving Report</source>
        <translation>导出推理部署报告</translation>
    </message>
    <message>
        <source>PDF (*.pdf);;PNG image (*.png)</source>
        <translation>PDF (*.pdf);;PNG 图片 (*.png)</translation>
    </message>
    <message>
        <source>Copy as P&amp;ython</source>
        <translation>复制为 P&amp;ython 代码</translation>
    </message>
    <message>
        <source>Copy the call of the batchfit Python package that estimates this model with this set-up.</source>
        <translation>复制用 batchfit Python 包以当前配置估算此模型的调用代码。</translation>
    </message>
</context>
<context>
    <name>batchfit::MemoryChart</name>
    <message>
        <source>Does not fit</source>
        <translation>放不下</translation>
    </message>
    <message>
        <source>GPU capacity</source>
        <translation>显存容量</translation>
    </message>
    <message>
        <source>Usable (capacity − margin)</source>
        <translation>可用显存（容量 − 余量）</translation>
    </message>
    <message>
        <source>batch size</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>batch size (log₂)</source>
        <translation>批大小（log₂）</translation>
    </message>
    <message>
        <source>GPU memory (GiB)</source>
        <translation>显存（GiB）</translation>
    </message>
    <message>
        <source>Memory of one training step by batch size. Hover an area for its values; click to pick a batch.</source>
        <translation>训练一步的显存随批大小的变化。悬停在色块上查看数值，点击可选定批大小。</translation>
    </message>
    <message>
        <source>&lt;b&gt;batch %1&lt;/b&gt;</source>
        <translation>&lt;b&gt;批大小 %1&lt;/b&gt;</translation>
    </message>
    <message>
        <source>needs (with overhead)</source>
        <translation>总需求（含额外开销）</translation>
    </message>
    <message>
        <source>capacity %1</source>
        <translation>容量 %1</translation>
    </message>
    <message>
        <source>usable %1</source>
        <translation>可用 %1</translation>
    </message>
    <message>
        <source>estimate of the measured figure</source>
        <translation>同一指标的估算值</translation>
    </message>
    <message>
        <source>measured</source>
        <translation>实测</translation>
    </message>
    <message>
        <source>Cannot Load Measurements</source>
        <translation>无法加载实测数据</translation>
    </message>
    <message>
        <source>%1

The measured points shown before, if any, are unchanged.</source>
        <translation>%1

之前显示的实测点（如有）保持不变。</translation>
    </message>
    <message>
        <source>&lt;b&gt;batch %1&lt;/b&gt; — measured (%2)</source>
        <translation>&lt;b&gt;批大小 %1&lt;/b&gt; — 实测（%2）</translation>
    </message>
    <message>
        <source>figure</source>
        <translation>指标</translation>
    </message>
    <message>
        <source>max_memory_allocated vs the estimated peak allocated</source>
        <translation>max_memory_allocated 对比估算的显存峰值（已分配）</translation>
    </message>
    <message>
        <source>parameters + gradients + optimizer states + saved activations</source>
        <translation>模型参数 + 反向梯度 + 优化器状态 + 保存的前向激活</translation>
    </message>
    <message>
        <source>estimated</source>
        <translation>估算</translation>
    </message>
    <message>
        <source>error</source>
        <translation>误差</translation>
    </message>
    <message>
        <source>not available</source>
        <translation>无</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>Measurements of Another Model?</source>
        <translation>是别的模型的测量结果？</translation>
    </message>
    <message>
        <source>GPU memory (GiB, log)</source>
        <translation>GPU 显存（GiB，对数）</translation>
    </message>
    <message>
        <source>needs here (fits with cache flushes)</source>
        <translation>本卡需要（清空缓存后放得下）</translation>
    </message>
</context>
<context>
    <name>batchfit::OnnxImportDialog</name>
    <message>
        <source>Import ONNX Model</source>
        <translation>导入 ONNX 模型</translation>
    </message>
    <message>
        <source>Cross-entropy (classification)</source>
        <translation>交叉熵（分类）</translation>
    </message>
    <message>
        <source>Mean squared error (regression)</source>
        <translation>均方误差（回归）</translation>
    </message>
    <message>
        <source>None (the graph output is the loss)</source>
        <translation>无（图的输出即为损失）</translation>
    </message>
    <message>
        <source>The loss layer appended after the graph output</source>
        <translation>追加在图输出之后的损失层</translation>
    </message>
    <message>
        <source>Keep operators BatchFit cannot map as &amp;opaque layers</source>
        <translation>将 BatchFit 无法映射的算子保留为不透明层(&amp;O)</translation>
    </message>
    <message>
        <source>Opaque layers count their parameters but no saved activations; without this option such a model is refused with the list of operators.</source>
        <translation>不透明层计入其模型参数，但不计入保存的前向激活；不勾选此项时，此类模型会被拒绝，并列出这些算子。</translation>
    </message>
    <message>
        <source>&amp;Loss:</source>
        <translation>损失(&amp;L)：</translation>
    </message>
</context>
<context>
    <name>batchfit::OpCatalogue</name>
    <message>
        <source>Fully connected layer: y = x·Wᵀ + b over the last dimension.</source>
        <translation>全连接层：在最后一维上计算 y = x·Wᵀ + b。</translation>
    </message>
    <message>
        <source>1-D convolution over [C, L].</source>
        <translation>一维卷积，输入为 [C, L]。</translation>
    </message>
    <message>
        <source>2-D convolution over [C, H, W].</source>
        <translation>二维卷积，输入为 [C, H, W]。</translation>
    </message>
    <message>
        <source>3-D convolution over [C, D, H, W].</source>
        <translation>三维卷积，输入为 [C, D, H, W]。</translation>
    </message>
    <message>
        <source>Transposed 2-D convolution (upsampling).</source>
        <translation>二维转置卷积（上采样）。</translation>
    </message>
    <message>
        <source>Batch normalisation over [C] or [C, L].</source>
        <translation>批归一化，输入为 [C] 或 [C, L]。</translation>
    </message>
    <message>
        <source>Batch normalisation over [C, H, W].</source>
        <translation>批归一化，输入为 [C, H, W]。</translation>
    </message>
    <message>
        <source>Layer normalisation over the trailing dimensions.</source>
        <translation>层归一化，作用于最后若干维。</translation>
    </message>
    <message>
        <source>Group normalisation: channels split into groups.</source>
        <translation>组归一化：把通道分成若干组。</translation>
    </message>
    <message>
        <source>RMS normalisation (Llama style).</source>
        <translation>RMS 归一化（Llama 风格）。</translation>
    </message>
    <message>
        <source>Looks up a vector per token id.</source>
        <translation>为每个 token id 查出一个向量。</translation>
    </message>
    <message>
        <source>ReLU activation.</source>
        <translation>ReLU 激活函数。</translation>
    </message>
    <message>
        <source>ReLU clipped at 6.</source>
        <translation>上限截断为 6 的 ReLU。</translation>
    </message>
    <message>
        <source>Hard-swish activation (MobileNetV3).</source>
        <translation>Hard-swish 激活函数（MobileNetV3）。</translation>
    </message>
    <message>
        <source>SiLU (swish) activation.</source>
        <translation>SiLU（swish）激活函数。</translation>
    </message>
    <message>
        <source>Leaky ReLU activation.</source>
        <translation>Leaky ReLU 激活函数。</translation>
    </message>
    <message>
        <source>GELU activation.</source>
        <translation>GELU 激活函数。</translation>
    </message>
    <message>
        <source>Sigmoid activation.</source>
        <translation>Sigmoid 激活函数。</translation>
    </message>
    <message>
        <source>Tanh activation.</source>
        <translation>Tanh 激活函数。</translation>
    </message>
    <message>
        <source>Softmax along a dimension.</source>
        <translation>沿某一维做 softmax。</translation>
    </message>
    <message>
        <source>Log-softmax along a dimension.</source>
        <translation>沿某一维做 log-softmax。</translation>
    </message>
    <message>
        <source>Dropout: saves a mask for the backward pass.</source>
        <translation>Dropout：为反向传播保存一个掩码。</translation>
    </message>
    <message>
        <source>2-D max pooling.</source>
        <translation>二维最大池化。</translation>
    </message>
    <message>
        <source>2-D average pooling.</source>
        <translation>二维平均池化。</translation>
    </message>
    <message>
        <source>Average pooling to a fixed output size.</source>
        <translation>池化到固定输出尺寸的平均池化。</translation>
    </message>
    <message>
        <source>Flattens dimensions into one (a view, no copy).</source>
        <translation>把若干维展平为一维（视图，不复制）。</translation>
    </message>
    <message>
        <source>Reshapes the per-sample tensor (a view).</source>
        <translation>改变单个样本张量的形状（视图）。</translation>
    </message>
    <message>
        <source>Swaps two dimensions (a view).</source>
        <translation>交换两个维度（视图）。</translation>
    </message>
    <message>
        <source>Reorders dimensions (a view).</source>
        <translation>重新排列各维（视图）。</translation>
    </message>
    <message>
        <source>Picks one index along a dimension (a view).</source>
        <translation>沿某一维取出一个下标（视图）。</translation>
    </message>
    <message>
        <source>Takes a range along a dimension (a view).</source>
        <translation>沿某一维截取一段（视图）。</translation>
    </message>
    <message>
        <source>Copies a view into contiguous memory.</source>
        <translation>把视图复制到连续内存中。</translation>
    </message>
    <message>
        <source>Passes the tensor through unchanged.</source>
        <translation>原样传递张量。</translation>
    </message>
    <message>
        <source>Adds two inputs (broadcasting).</source>
        <translation>两个输入相加（支持广播）。</translation>
    </message>
    <message>
        <source>Multiplies two inputs (broadcasting).</source>
        <translation>两个输入相乘（支持广播）。</translation>
    </message>
    <message>
        <source>Multiplies by a constant factor.</source>
        <translation>乘以一个常数。</translation>
    </message>
    <message>
        <source>Concatenates inputs along a dimension.</source>
        <translation>沿某一维拼接多个输入。</translation>
    </message>
    <message>
        <source>Matrix product of two inputs.</source>
        <translation>两个输入的矩阵乘积。</translation>
    </message>
    <message>
        <source>Multi-head self-attention, projections included.</source>
        <translation>多头自注意力，包含各投影层。</translation>
    </message>
    <message>
        <source>Prepends a learned class token (ViT).</source>
        <translation>在开头加入可学习的分类 token（ViT）。</translation>
    </message>
    <message>
        <source>Adds a learned tensor, e.g. a position embedding.</source>
        <translation>加上一个可学习的张量，例如位置编码。</translation>
    </message>
    <message>
        <source>Cross-entropy loss over class logits.</source>
        <translation>基于类别 logits 的交叉熵损失。</translation>
    </message>
    <message>
        <source>Mean squared error loss.</source>
        <translation>均方误差损失。</translation>
    </message>
    <message>
        <source>A layer measured elsewhere: parameters and saved bytes given directly.</source>
        <translation>在别处实测过的层：直接给出参数量和保存的字节数。</translation>
    </message>
    <message>
        <source>Linear and matmul</source>
        <translation>线性层与矩阵乘</translation>
    </message>
    <message>
        <source>Convolution</source>
        <translation>卷积</translation>
    </message>
    <message>
        <source>Normalization</source>
        <translation>归一化</translation>
    </message>
    <message>
        <source>Embedding and tokens</source>
        <translation>嵌入与词元</translation>
    </message>
    <message>
        <source>Attention</source>
        <translation>注意力</translation>
    </message>
    <message>
        <source>Activation and dropout</source>
        <translation>激活与 Dropout</translation>
    </message>
    <message>
        <source>Pooling</source>
        <translation>池化</translation>
    </message>
    <message>
        <source>Shape and layout</source>
        <translation>形状与布局</translation>
    </message>
    <message>
        <source>Arithmetic</source>
        <translation>算术</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>Other</source>
        <translation>其他</translation>
    </message>
    <message>
        <source>x to a constant power; keeps x for backward.</source>
        <translation>x 的常数次幂；为反向保存 x。</translation>
    </message>
    <message>
        <source>1/√x elementwise; keeps its result.</source>
        <translation>逐元素 1/√x；保存其结果。</translation>
    </message>
    <message>
        <source>√x elementwise; keeps its result.</source>
        <translation>逐元素 √x；保存其结果。</translation>
    </message>
    <message>
        <source>eˣ elementwise; keeps its result.</source>
        <translation>逐元素 eˣ；保存其结果。</translation>
    </message>
    <message>
        <source>Natural logarithm; keeps x.</source>
        <translation>自然对数；保存 x。</translation>
    </message>
    <message>
        <source>Clamps to [min, max]; keeps x.</source>
        <translation>截断到 [min, max]；保存 x。</translation>
    </message>
    <message>
        <source>Absolute value; keeps x.</source>
        <translation>绝对值；保存 x。</translation>
    </message>
    <message>
        <source>−x; keeps nothing.</source>
        <translation>−x；不保存任何张量。</translation>
    </message>
    <message>
        <source>1/x elementwise; keeps its result.</source>
        <translation>逐元素 1/x；保存其结果。</translation>
    </message>
    <message>
        <source>Sine; keeps x.</source>
        <translation>正弦；保存 x。</translation>
    </message>
    <message>
        <source>Cosine; keeps x.</source>
        <translation>余弦；保存 x。</translation>
    </message>
    <message>
        <source>Mean over dims (torch 2.x keeps nothing, 1.13 keeps x).</source>
        <translation>沿维度求均值（torch 2.x 不保存，1.13 保存 x）。</translation>
    </message>
    <message>
        <source>Sum over dims; keeps nothing.</source>
        <translation>沿维度求和；不保存任何张量。</translation>
    </message>
    <message>
        <source>A comparison (x &gt; 0, x == y): a bool mask, no gradient.</source>
        <translation>比较运算（x &gt; 0、x == y）：得到布尔掩码，没有梯度。</translation>
    </message>
    <message>
        <source>Fills where a mask is set (masked_fill, torch.where); keeps the mask.</source>
        <translation>在掩码为真处填充（masked_fill、torch.where）；保存掩码。</translation>
    </message>
    <message>
        <source>Multiplies by a learned tensor, e.g. RMSNorm&apos;s weight or a layer scale.</source>
        <translation>乘以可学习张量，例如 RMSNorm 的 weight 或层缩放（layer scale）。</translation>
    </message>
    <message>
        <source>F.scaled_dot_product_attention on q, k, v [heads, seq, dim]: flash or memory-efficient kernels keep q, k, v, the output and a log-sum-exp, never the seq×seq scores.</source>
        <translation>对 q、k、v [头数, 序列, 维度] 调用 F.scaled_dot_product_attention：flash 或 memory-efficient 内核只保存 q、k、v、输出和 log-sum-exp，从不保存 序列×序列 的注意力分数。</translation>
    </message>
    <message>
        <source>Converts to another dtype (x.float(), x.to(torch.bfloat16), x.type_as(y)): a new tensor, nothing saved.</source>
        <translation>转换为另一种数据类型（x.float()、x.to(torch.bfloat16)、x.type_as(y)）：生成新张量，不保存任何东西。</translation>
    </message>
</context>
<context>
    <name>batchfit::ParallelEditor</name>
    <message>
        <source>one GPU</source>
        <translation>单张 GPU</translation>
    </message>
    <message>
        <source>DDP (replicas)</source>
        <translation>DDP（完整副本）</translation>
    </message>
    <message>
        <source>ZeRO-1 (states sharded)</source>
        <translation>ZeRO-1（状态分片）</translation>
    </message>
    <message>
        <source>ZeRO-2 (+ gradients)</source>
        <translation>ZeRO-2（+ 梯度）</translation>
    </message>
    <message>
        <source>ZeRO-3 (+ parameters)</source>
        <translation>ZeRO-3（+ 参数）</translation>
    </message>
    <message>
        <source>FSDP full shard</source>
        <translation>FSDP 完全分片</translation>
    </message>
    <message>
        <source>FSDP SHARD_GRAD_OP</source>
        <translation>FSDP SHARD_GRAD_OP</translation>
    </message>
    <message>
        <source>HSDP (shards within a node)</source>
        <translation>HSDP（节点内分片）</translation>
    </message>
    <message>
        <source>FSDP2 (fully_shard)</source>
        <translation>FSDP2（fully_shard）</translation>
    </message>
    <message>
        <source>×</source>
        <translation>×</translation>
    </message>
    <message>
        <source>Data parallelism: the batch is the micro-batch per GPU, and the chart and verdict are one GPU&apos;s (the most loaded).</source>
        <translation>数据并行：批大小是每张 GPU 的微批大小，图表和结论都是单张 GPU（负载最重的那张）的。</translation>
    </message>
    <message>
        <source>What each GPU keeps: DDP a full replica (+ gradient buckets); ZeRO-1/2/3 shard optimizer states, gradients, parameters; FSDP gathers each block&apos;s parameters only while it runs.</source>
        <translation>每张 GPU 保存什么：DDP 保存完整副本（+ 梯度桶）；ZeRO-1/2/3 依次对优化器状态、梯度、参数分片；FSDP 只在模块运行时聚合它的参数。</translation>
    </message>
    <message>
        <source>The framework settings that change memory: buckets, prefetching, resharding</source>
        <translation>会改变显存的框架设置：桶、预取、重新分片</translation>
    </message>
    <message>
        <source> MiB buckets</source>
        <translation> MiB 桶</translation>
    </message>
    <message>
        <source>DDP bucket_cap_mb (default 25): how gradients are grouped for all-reduce</source>
        <translation>DDP bucket_cap_mb（默认 25）：all-reduce 时梯度如何分组</translation>
    </message>
    <message>
        <source>gradient_as_bucket_view</source>
        <translation>gradient_as_bucket_view</translation>
    </message>
    <message>
        <source>Gradients are views into the buckets: saves one gradient-sized buffer</source>
        <translation>梯度是桶的视图：省下一份梯度大小的缓冲</translation>
    </message>
    <message>
        <source>DDP:</source>
        <translation>DDP：</translation>
    </message>
    <message>
        <source> M elements</source>
        <translation> M 个元素</translation>
    </message>
    <message>
        <source>DeepSpeed reduce_bucket_size (default 500 M elements): the reduce buffers are this size whatever the model</source>
        <translation>DeepSpeed reduce_bucket_size（默认 5 亿个元素）：无论模型多大，归约缓冲都是这个大小</translation>
    </message>
    <message>
        <source>overlap: default</source>
        <translation>重叠：默认</translation>
    </message>
    <message>
        <source>overlap on</source>
        <translation>开启重叠</translation>
    </message>
    <message>
        <source>overlap off</source>
        <translation>关闭重叠</translation>
    </message>
    <message>
        <source>overlap_comm: two reduce buffers instead of one (DeepSpeed&apos;s default: on for stage 3 only)</source>
        <translation>overlap_comm：两个归约缓冲而不是一个（DeepSpeed 默认只在第 3 阶段开启）</translation>
    </message>
    <message>
        <source>ZeRO-1 by DeepSpeed (flat partitions) or torch&apos;s ZeroRedundancyOptimizer over DDP (whole tensors, greedy by size: ranks differ)</source>
        <translation>ZeRO-1 由 DeepSpeed 实现（扁平分区），或由 torch 的 ZeroRedundancyOptimizer 在 DDP 之上实现（整个张量按大小贪心分配：各 rank 不同）</translation>
    </message>
    <message>
        <source>ZeRO:</source>
        <translation>ZeRO：</translation>
    </message>
    <message>
        <source> per node</source>
        <translation> 张/节点</translation>
    </message>
    <message>
        <source>GPUs per node: HSDP shards within a node and replicates across nodes</source>
        <translation>每个节点的 GPU 数：HSDP 在节点内分片、跨节点复制</translation>
    </message>
    <message>
        <source>limit all-gathers</source>
        <translation>限制 all-gather</translation>
    </message>
    <message>
        <source>limit_all_gathers (default on): at most two blocks gathered at a time</source>
        <translation>limit_all_gathers（默认开启）：同时最多聚合两个模块</translation>
    </message>
    <message>
        <source>prefetch pre</source>
        <translation>提前预取</translation>
    </message>
    <message>
        <source>BackwardPrefetch.BACKWARD_PRE (the default): the next block&apos;s parameters are gathered before the current block&apos;s gradients are reduced</source>
        <translation>BackwardPrefetch.BACKWARD_PRE（默认）：在归约当前模块的梯度之前先聚合下一个模块的参数</translation>
    </message>
    <message>
        <source>reshard after forward</source>
        <translation>前向后重新分片</translation>
    </message>
    <message>
        <source>FSDP2 reshard_after_forward (default on); off keeps gathered parameters to the backward, as SHARD_GRAD_OP</source>
        <translation>FSDP2 reshard_after_forward（默认开启）；关闭时聚合的参数一直保留到反向，与 SHARD_GRAD_OP 相同</translation>
    </message>
    <message>
        <source>FSDP:</source>
        <translation>FSDP：</translation>
    </message>
    <message>
        <source>%1 GPUs</source>
        <translation>%1 张 GPU</translation>
    </message>
    <message>
        <source>Parallelism: %1</source>
        <translation>并行：%1</translation>
    </message>
    <message>
        <source>DDP buckets %1 MiB</source>
        <translation>DDP 桶 %1 MiB</translation>
    </message>
    <message>
        <source>Gradients as bucket views</source>
        <translation>梯度作为桶视图</translation>
    </message>
    <message>
        <source>Gradients apart from the buckets</source>
        <translation>梯度与桶分开</translation>
    </message>
    <message>
        <source>ZeRO reduce buckets %1 M</source>
        <translation>ZeRO 归约桶 %1 M</translation>
    </message>
    <message>
        <source>ZeRO %1</source>
        <translation>ZeRO %1</translation>
    </message>
    <message>
        <source>ZeRO-1 by %1</source>
        <translation>ZeRO-1 由 %1 实现</translation>
    </message>
    <message>
        <source>%1 GPUs per node</source>
        <translation>每节点 %1 张 GPU</translation>
    </message>
    <message>
        <source>Limit all-gathers</source>
        <translation>限制 all-gather</translation>
    </message>
    <message>
        <source>Unlimited all-gathers</source>
        <translation>不限制 all-gather</translation>
    </message>
    <message>
        <source>Backward prefetch: pre</source>
        <translation>反向预取：提前</translation>
    </message>
    <message>
        <source>Backward prefetch: post</source>
        <translation>反向预取：滞后</translation>
    </message>
    <message>
        <source>Reshard after forward</source>
        <translation>前向后重新分片</translation>
    </message>
    <message>
        <source>Keep gathered parameters to the backward</source>
        <translation>聚合的参数保留到反向</translation>
    </message>
    <message>
        <source>Number of GPUs</source>
        <translation>GPU 数量</translation>
    </message>
    <message>
        <source>Advanced</source>
        <translation>高级</translation>
    </message>
    <message>
        <source>Parallelism:</source>
        <translation>并行：</translation>
    </message>
    <message>
        <source>Megatron tensor parallelism: each layer&apos;s heads, MLP columns and the vocabulary split over this many of the GPUs; the data-parallel replicas are GPUs / this</source>
        <translation>Megatron 张量并行：每层的注意力头、MLP 列和词表在这么多张 GPU 上切分；数据并行副本数为 GPU 数除以它</translation>
    </message>
    <message>
        <source>Tensor parallel ×%1</source>
        <translation>张量并行 ×%1</translation>
    </message>
    <message>
        <source>PP ×</source>
        <translation>PP ×</translation>
    </message>
    <message>
        <source>M = stages</source>
        <translation>M = 阶段数</translation>
    </message>
    <message>
        <source>M </source>
        <translation>M </translation>
    </message>
    <message>
        <source>TP ×</source>
        <translation>TP ×</translation>
    </message>
    <message>
        <source>Model parallel:</source>
        <translation>模型并行：</translation>
    </message>
    <message>
        <source>Pipeline ×%1</source>
        <translation>流水线 ×%1</translation>
    </message>
    <message>
        <source>%1 micro-batches</source>
        <translation>%1 个微批</translation>
    </message>
    <message>
        <source>Sequence parallel</source>
        <translation>序列并行</translation>
    </message>
    <message>
        <source>Megatron sequence parallelism (needs TP &gt; 1): the norms, dropouts and residual stream are split over the tensor-parallel GPUs along the sequence; each linear keeps only its share of its input</source>
        <translation>Megatron 序列并行（需要 TP &gt; 1）：归一化、dropout 和残差流沿序列切分到张量并行的各张 GPU 上；每个线性层只保存自己那一份输入</translation>
    </message>
    <message>
        <source>Pipeline stages (1F1B): the first stage (the embedding and its share of the layers) and the last (the head and the loss) are simulated, and the heavier is shown</source>
        <translation>流水线阶段数（1F1B）：模拟第一个阶段（嵌入层和它分到的层）和最后一个阶段（输出头和损失），显示占用更大的那个</translation>
    </message>
    <message>
        <source>Micro-batches per step in the pipeline: the first stage keeps the activations of min(M, stages) of them, the last one</source>
        <translation>流水线中每步的微批数：第一个阶段保存其中 min(M, 阶段数) 个微批的激活，最后一个阶段保存 1 个</translation>
    </message>
    <message>
        <source>No sequence parallelism</source>
        <translation>不用序列并行</translation>
    </message>
</context>
<context>
    <name>batchfit::ReportExporter</name>
    <message>
        <source>This build has no report support.</source>
        <translation>此版本未包含报告功能。</translation>
    </message>
    <message>
        <source>PDF report (*.pdf);;PNG image (*.png);;Markdown (*.md);;JSON (*.json);;CSV (*.csv)</source>
        <translation>PDF 报告 (*.pdf);;PNG 图片 (*.png);;Markdown (*.md);;JSON (*.json);;CSV (*.csv)</translation>
    </message>
</context>
<context>
    <name>batchfit::SegmentMap</name>
    <message>
        <source>%1 (%2 bytes)</source>
        <translation>%1（%2 字节）</translation>
    </message>
    <message>
        <source>free inside a segment (cached)</source>
        <translation>内存段内的空闲部分（已缓存）</translation>
    </message>
    <message>
        <source>small pool</source>
        <translation>小块内存池</translation>
    </message>
    <message>
        <source>Free inside the segment</source>
        <translation>内存段内的空闲部分</translation>
    </message>
    <message>
        <source>Allocated (no component)</source>
        <translation>已分配（不属于任何组成部分）</translation>
    </message>
    <message>
        <source>requested %1</source>
        <translation>请求 %1</translation>
    </message>
    <message>
        <source>offset %1</source>
        <translation>偏移 %1</translation>
    </message>
    <message>
        <source>Segment %1 of the small pool, %2</source>
        <translation>小块内存池的内存段 %1，%2</translation>
    </message>
    <message>
        <source>Segment %1 of the large pool, %2</source>
        <translation>大块内存池的内存段 %1，%2</translation>
    </message>
    <message>
        <source>expandable</source>
        <translation>可扩展</translation>
    </message>
    <message>
        <source>%1 blocks narrower than a pixel here:</source>
        <translation>此处有 %1 个不足一个像素宽的块：</translation>
    </message>
    <message>
        <source>… and %1 more</source>
        <translation>……另有 %1 个</translation>
    </message>
    <message>
        <source>Segment %1: %2, %3 blocks</source>
        <translation>内存段 %1：%2，%3 个块</translation>
    </message>
    <message>
        <source>tensors, coloured by component</source>
        <translation>张量，按组成部分着色</translation>
    </message>
    <message>
        <source>expandable: room to grow</source>
        <translation>可扩展：尚可增长的空间</translation>
    </message>
</context>
<context>
    <name>batchfit::SegmentsView</name>
    <message>
        <source>PyTorch&apos;s caching allocator right after this op, replayed on a GPU large enough (nothing is released): allocated counts the blocks handed to tensors, reserved the segments taken from cudaMalloc, free inside segments the free pieces of split segments (inactive_split_bytes), which the allocator cannot give back to the GPU.</source>
        <translation>该算子刚执行完时 PyTorch 缓存分配器的状态，在足够大的 GPU 上回放（不释放任何缓存）：已分配为交给张量的块，预留为通过 cudaMalloc 取得的内存段，内存段内的空闲部分为已拆分内存段中的空闲碎片（inactive_split_bytes），分配器无法把它们还给 GPU。</translation>
    </message>
    <message>
        <source>Peak</source>
        <translation>峰值</translation>
    </message>
    <message>
        <source>Show the segments at the peak of the allocated bytes</source>
        <translation>显示已分配字节达到峰值时的内存段</translation>
    </message>
    <message>
        <source>The segments at the moment picked above, in address order: each bar is as long as its size (long ones go on over further lines), its blocks in the colours of their component; the small pool&apos;s 2 MiB segments sit side by side on a scale of their own. Hover a block for its size.</source>
        <translation>上方所选时刻的内存段，按地址排列：每条的长度与其大小成正比（过长的会换行接续），其中的块按所属组成部分着色；小块内存池的 2 MiB 内存段按单独的比例尺并排显示。鼠标悬停在块上可查看其大小。</translation>
    </message>
    <message>
        <source>No replay: there is no estimate at this batch.</source>
        <translation>无回放：此批大小下没有估算结果。</translation>
    </message>
    <message>
        <source>No replay: %1</source>
        <translation>无回放：%1</translation>
    </message>
    <message>
        <source>No replay: the step has no timeline.</source>
        <translation>无回放：这一步没有时间线。</translation>
    </message>
    <message>
        <source>at %1: allocated %2, reserved %3, free inside segments %4 (inactive split), %5</source>
        <translation>在 %1：已分配 %2，预留 %3，内存段内空闲 %4（inactive split），%5</translation>
    </message>
    <message>
        <source>1 segment</source>
        <translation>1 个内存段</translation>
    </message>
    <message>
        <source>%1 segments</source>
        <translation>%1 个内存段</translation>
    </message>
    <message>
        <source>Does not fit this GPU: %1</source>
        <translation>这块 GPU 放不下：%1</translation>
    </message>
    <message>
        <source>Does not fit this GPU: the first training step stops at %1 with: %2</source>
        <translation>这块 GPU 放不下：第一个训练步停在 %1，报错：%2</translation>
    </message>
    <message>
        <source>Does not fit this GPU: the steady-state step stops at %1 with: %2</source>
        <translation>这块 GPU 放不下：稳定状态的训练步停在 %1，报错：%2</translation>
    </message>
    <message>
        <source>Does not fit this GPU: the epoch&apos;s last batch (%1 samples) stops at %2 with: %3</source>
        <translation>这块 GPU 放不下：epoch 的最后一个批次（%1 个样本）在 %2 处停止，报错：%3</translation>
    </message>
</context>
<context>
    <name>batchfit::ServingChart</name>
    <message>
        <source>concurrent sequences</source>
        <translation>并发序列数</translation>
    </message>
    <message>
        <source>GPU memory (GiB)</source>
        <translation>显存 (GiB)</translation>
    </message>
    <message>
        <source>Outside PyTorch</source>
        <translation>PyTorch 之外</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>Activation peak</source>
        <translation>激活峰值</translation>
    </message>
    <message>
        <source>CUDA graphs</source>
        <translation>CUDA Graph</translation>
    </message>
    <message>
        <source>KV cache used</source>
        <translation>已用 KV 缓存</translation>
    </message>
    <message>
        <source>capacity</source>
        <translation>容量</translation>
    </message>
    <message>
        <source>KV cache ends</source>
        <translation>KV 缓存上限</translation>
    </message>
    <message>
        <source>chosen</source>
        <translation>当前选择</translation>
    </message>
    <message>
        <source>utilization × capacity</source>
        <translation>显存利用率 × 容量</translation>
    </message>
</context>
<context>
    <name>batchfit::ServingHeatMap</name>
    <message>
        <source>%1 sequences of %2 tokens: fit, %3% of the KV cache</source>
        <translation>%1 条 %2 token 的序列：放得下，占 KV 缓存的 %3%</translation>
    </message>
    <message>
        <source>%1 sequences of %2 tokens: do not fit (%3% of the KV cache)</source>
        <translation>%1 条 %2 token 的序列：放不下（需要 KV 缓存的 %3%）</translation>
    </message>
    <message>
        <source>No serving estimate to map.</source>
        <translation>没有可绘制的推理估算。</translation>
    </message>
    <message>
        <source>context (tokens per request, rows) × concurrent sequences (columns)</source>
        <translation>上下文长度（每个请求的 token 数，行）× 并发序列数（列）</translation>
    </message>
</context>
<context>
    <name>batchfit::ServingLeverModel</name>
    <message>
        <source>fp8 KV cache</source>
        <translation>fp8 KV 缓存</translation>
    </message>
    <message>
        <source>max_model_len %1</source>
        <translation>max_model_len 设为 %1</translation>
    </message>
    <message>
        <source>tensor parallel %1 (per GPU)</source>
        <translation>张量并行 %1（每张卡）</translation>
    </message>
    <message>
        <source>AWQ 4-bit weights</source>
        <translation>AWQ 4 位权重</translation>
    </message>
    <message>
        <source>utilization %1</source>
        <translation>显存利用率 %1</translation>
    </message>
    <message>
        <source>does not start</source>
        <translation>无法启动</translation>
    </message>
    <message>
        <source>%1 (×%2)</source>
        <translation>%1（×%2）</translation>
    </message>
    <message>
        <source>Double-click to apply this change.</source>
        <translation>双击应用这项调整。</translation>
    </message>
    <message>
        <source>Change</source>
        <translation>调整</translation>
    </message>
    <message>
        <source>Sequences at once</source>
        <translation>同时并发序列数</translation>
    </message>
    <message>
        <source>KV cache (tokens)</source>
        <translation>KV 缓存（token）</translation>
    </message>
</context>
<context>
    <name>batchfit::ServingView</name>
    <message>
        <source>No model config: open a decoder&apos;s config.json (or import one from Hugging Face).</source>
        <translation>还没有模型配置：打开一个解码器模型的 config.json（或从 Hugging Face 导入）。</translation>
    </message>
    <message>
        <source>Open &amp;config.json…</source>
        <translation>打开 config.json(&amp;C)…</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>显存</translation>
    </message>
    <message>
        <source>Sequences × context</source>
        <translation>并发 × 上下文</translation>
    </message>
    <message>
        <source>What would help?</source>
        <translation>怎样能放下更多？</translation>
    </message>
    <message>
        <source>Serving set-up</source>
        <translation>推理部署设置</translation>
    </message>
    <message>
        <source>vLLM (V1 engine)</source>
        <translation>vLLM（V1 引擎）</translation>
    </message>
    <message>
        <source>vLLM V0 engine</source>
        <translation>vLLM V0 引擎</translation>
    </message>
    <message>
        <source>SGLang</source>
        <translation>SGLang</translation>
    </message>
    <message>
        <source>HF generate(), DynamicCache</source>
        <translation>HF generate()，DynamicCache</translation>
    </message>
    <message>
        <source>HF generate(), StaticCache</source>
        <translation>HF generate()，StaticCache</translation>
    </message>
    <message>
        <source>engine default</source>
        <translation>引擎默认值</translation>
    </message>
    <message>
        <source>the model&apos;s</source>
        <translation>模型自带</translation>
    </message>
    <message>
        <source>max_model_len</source>
        <translation>max_model_len</translation>
    </message>
    <message>
        <source>Tokens per request (prompt and output) the concurrency is asked for.</source>
        <translation>计算并发数时每个请求的 token 数（输入加输出）。</translation>
    </message>
    <message>
        <source>model dtype</source>
        <translation>模型精度</translation>
    </message>
    <message>
        <source>as the config says</source>
        <translation>按配置文件</translation>
    </message>
    <message>
        <source>no CUDA graphs (enforce_eager)</source>
        <translation>不用 CUDA Graph（enforce_eager）</translation>
    </message>
    <message>
        <source>GPU memory &amp;utilization:</source>
        <translation>显存利用率(&amp;U)：</translation>
    </message>
    <message>
        <source>Max model &amp;length:</source>
        <translation>最大上下文长度(&amp;L)：</translation>
    </message>
    <message>
        <source>&amp;Tokens per request:</source>
        <translation>每个请求的 token 数(&amp;T)：</translation>
    </message>
    <message>
        <source>&amp;KV cache:</source>
        <translation>KV 缓存(&amp;K)：</translation>
    </message>
    <message>
        <source>&amp;Weights:</source>
        <translation>权重(&amp;W)：</translation>
    </message>
    <message>
        <source>Tensor &amp;parallel:</source>
        <translation>张量并行(&amp;P)：</translation>
    </message>
    <message>
        <source>Pipeline &amp;stages:</source>
        <translation>流水线并行段数(&amp;S)：</translation>
    </message>
    <message>
        <source>Concurrent se&amp;quences:</source>
        <translation>并发序列数(&amp;Q)：</translation>
    </message>
    <message>
        <source>Most that fit</source>
        <translation>最多能放几条</translation>
    </message>
    <message>
        <source>The most sequences of this length the KV cache holds at once (capped by max_num_seqs).</source>
        <translation>KV 缓存能同时放下的这个长度的最多序列数（不超过 max_num_seqs）。</translation>
    </message>
    <message>
        <source>Cannot serve %1: %2</source>
        <translation>无法按推理部署读取 %1：%2</translation>
    </message>
    <message>
        <source>%1 (%2, %3 parameters) from %4</source>
        <translation>%1（%2，%3 个参数），来自 %4</translation>
    </message>
    <message>
        <source>Open a decoder&apos;s config.json to see how many requests fit.</source>
        <translation>打开解码器模型的 config.json，看看能同时放下多少请求。</translation>
    </message>
    <message>
        <source>The engine would not start: %1</source>
        <translation>引擎无法启动：%1</translation>
    </message>
    <message>
        <source>fits: %1 × %2 tokens use %3% of the KV cache (at most %4 at once)</source>
        <translation>放得下：%1 × %2 token 占 KV 缓存的 %3%（最多同时 %4 条）</translation>
    </message>
    <message>
        <source>does not fit: %1 × %2 tokens need %3% of the KV cache (at most %4 at once)</source>
        <translation>放不下：%1 × %2 token 需要 KV 缓存的 %3%（最多同时 %4 条）</translation>
    </message>
    <message>
        <source>GPU KV cache size: %1 tokens · Maximum concurrency for %2 tokens per request: %3x · at %4 tokens, %5 sequences at once</source>
        <translation>GPU KV 缓存大小：%1 token · 每个请求 %2 token 时的最大并发：%3x · %4 token 时可同时放 %5 条</translation>
    </message>
    <message>
        <source>Part</source>
        <translation>组成部分</translation>
    </message>
    <message>
        <source>On one GPU</source>
        <translation>单卡占用</translation>
    </message>
    <message>
        <source>GPU memory</source>
        <translation>显存总量</translation>
    </message>
    <message>
        <source>CUDA context, NCCL (before the engine)</source>
        <translation>CUDA 上下文、NCCL（引擎启动前）</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>Activation peak (profile run)</source>
        <translation>激活峰值（预跑）</translation>
    </message>
    <message>
        <source>Non-torch memory after start-up</source>
        <translation>启动后 PyTorch 之外的显存</translation>
    </message>
    <message>
        <source>CUDA graphs</source>
        <translation>CUDA Graph</translation>
    </message>
    <message>
        <source>Margin after capture</source>
        <translation>CUDA Graph 捕获后的余量</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>KV 缓存</translation>
    </message>
    <message>
        <source>KV cache per token</source>
        <translation>每个 token 的 KV 缓存</translation>
    </message>
    <message>
        <source>Open a Decoder&apos;s config.json</source>
        <translation>打开解码器模型的 config.json</translation>
    </message>
    <message>
        <source>Hugging Face configs (config.json *.json);;All files (*)</source>
        <translation>Hugging Face 配置 (config.json *.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>vLLM ve&amp;rsion:</source>
        <translation>vLLM 版本(&amp;R)：</translation>
    </message>
    <message>
        <source>&amp;GPU:</source>
        <translation>GPU(&amp;G)：</translation>
    </message>
    <message>
        <source>E&amp;ngine:</source>
        <translation>推理引擎(&amp;N)：</translation>
    </message>
    <message>
        <source>Custom · %1</source>
        <translation>自定义 · %1</translation>
    </message>
</context>
<context>
    <name>batchfit::SettingSpinBox</name>
    <message>
        <source>Exactly %1: the box shows it rounded; the value is kept as it is until you change it.</source>
        <translation>精确值为 %1：输入框显示的是取整后的值；在你修改之前，该值保持不变。</translation>
    </message>
</context>
<context>
    <name>batchfit::TimelineChart</name>
    <message>
        <source>setup</source>
        <translation>准备</translation>
    </message>
    <message>
        <source>forward</source>
        <translation>前向</translation>
    </message>
    <message>
        <source>backward</source>
        <translation>反向</translation>
    </message>
    <message>
        <source>optimizer step</source>
        <translation>优化器更新</translation>
    </message>
    <message>
        <source>Peak</source>
        <translation>峰值</translation>
    </message>
    <message>
        <source>one training step, op by op</source>
        <translation>训练一步，逐个算子</translation>
    </message>
    <message>
        <source>live memory (GiB)</source>
        <translation>驻留显存（GiB）</translation>
    </message>
    <message>
        <source>Live memory after each op of one step: activations grow through the forward pass and are freed through the backward pass. Hover for the op.</source>
        <translation>训练一步中每个算子执行后的驻留显存：激活在前向传播中不断累积，在反向传播中逐步释放。悬停可查看对应算子。</translation>
    </message>
    <message>
        <source>Peak %1 during %2: %3</source>
        <translation>显存峰值 %1，出现在%2阶段：%3</translation>
    </message>
    <message>
        <source>Peak %1</source>
        <translation>显存峰值 %1</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt; (%2)&lt;br&gt;live: %3</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;（%2）&lt;br&gt;驻留：%3</translation>
    </message>
</context>
<context>
    <name>batchfit::TrainingPanel</name>
    <message>
        <source>SGD</source>
        <translation>SGD</translation>
    </message>
    <message>
        <source>SGD with momentum</source>
        <translation>带动量的 SGD</translation>
    </message>
    <message>
        <source>SGD with Nesterov momentum</source>
        <translation>带 Nesterov 动量的 SGD</translation>
    </message>
    <message>
        <source>Adam</source>
        <translation>Adam</translation>
    </message>
    <message>
        <source>AdamW</source>
        <translation>AdamW</translation>
    </message>
    <message>
        <source>RMSprop</source>
        <translation>RMSprop</translation>
    </message>
    <message>
        <source>Adagrad</source>
        <translation>Adagrad</translation>
    </message>
    <message>
        <source>Adafactor</source>
        <translation>Adafactor</translation>
    </message>
    <message>
        <source>Lion</source>
        <translation>Lion</translation>
    </message>
    <message>
        <source>8-bit Adam (bitsandbytes)</source>
        <translation>8 位 Adam（bitsandbytes）</translation>
    </message>
    <message>
        <source>fp32</source>
        <translation>fp32</translation>
    </message>
    <message>
        <source>fp16 mixed precision (autocast)</source>
        <translation>fp16 混合精度（autocast）</translation>
    </message>
    <message>
        <source>bf16 mixed precision (autocast)</source>
        <translation>bf16 混合精度（autocast）</translation>
    </message>
    <message>
        <source>pure fp16</source>
        <translation>纯 fp16</translation>
    </message>
    <message>
        <source>pure bf16</source>
        <translation>纯 bf16</translation>
    </message>
    <message>
        <source>fp16 weights + fp32 master copy</source>
        <translation>fp16 权重 + fp32 主权重</translation>
    </message>
    <message>
        <source>bf16 weights + fp32 master copy</source>
        <translation>bf16 权重 + fp32 主权重</translation>
    </message>
    <message>
        <source>none</source>
        <translation>不使用</translation>
    </message>
    <message>
        <source>every block</source>
        <translation>每个模块</translation>
    </message>
    <message>
        <source>every k-th block</source>
        <translation>每 k 个模块一个</translation>
    </message>
    <message>
        <source>selective (attention only)</source>
        <translation>选择性（仅注意力）</translation>
    </message>
    <message>
        <source>The GPU to fit: its memory is the capacity line in the chart.</source>
        <translation>要放进的 GPU：它的显存就是图中的容量线。</translation>
    </message>
    <message>
        <source>Capacity of a GPU that is not in the catalogue.</source>
        <translation>不在列表中的 GPU 的显存容量。</translation>
    </message>
    <message>
        <source>&amp;GPU:</source>
        <translation>&amp;GPU：</translation>
    </message>
    <message>
        <source>The optimizer decides how much state is kept per parameter: none for SGD, one buffer for momentum, two for Adam.</source>
        <translation>优化器决定每个参数要保存多少状态：SGD 不需要，动量需要一份，Adam 需要两份。</translation>
    </message>
    <message>
        <source>Optimi&amp;zer:</source>
        <translation>优化器(&amp;Z)：</translation>
    </message>
    <message>
        <source>for-loop</source>
        <translation>for 循环</translation>
    </message>
    <message>
        <source>foreach</source>
        <translation>foreach</translation>
    </message>
    <message>
        <source>fused</source>
        <translation>融合（fused）</translation>
    </message>
    <message>
        <source>AMSGrad</source>
        <translation>AMSGrad</translation>
    </message>
    <message>
        <source>Adam/AdamW keep a third state tensor (max_exp_avg_sq).</source>
        <translation>Adam/AdamW 会多保存一个状态张量（max_exp_avg_sq）。</translation>
    </message>
    <message>
        <source>&amp;Implementation:</source>
        <translation>实现方式(&amp;I)：</translation>
    </message>
    <message>
        <source>Number format of weights and activations: autocast keeps fp32 weights and saves half-precision activations; pure half stores everything in 16 bits.</source>
        <translation>权重和激活的数值格式：autocast 保留 fp32 权重、以半精度保存激活；纯半精度则全部用 16 位存储。</translation>
    </message>
    <message>
        <source>&amp;Precision:</source>
        <translation>精度(&amp;P)：</translation>
    </message>
    <message>
        <source>Gradient checkpointing drops activations inside blocks and recomputes them in the backward pass: less memory for about a third more compute.</source>
        <translation>梯度检查点会丢弃模块内部的激活，在反向传播时重新计算：显存更省，但计算量约增加三分之一。</translation>
    </message>
    <message>
        <source>k = </source>
        <translation>k = </translation>
    </message>
    <message>
        <source>With every k-th block: checkpoint one block in k.</source>
        <translation>“每 k 个模块一个”：每 k 个模块对其中一个做检查点。</translation>
    </message>
    <message>
        <source>&amp;Checkpointing:</source>
        <translation>梯度检查点(&amp;C)：</translation>
    </message>
    <message>
        <source>Micro-batches per optimizer step. The batch size is the micro-batch: accumulation does not change the memory of one step.</source>
        <translation>每次优化器更新包含的微批次数。这里的批大小指微批次大小：梯度累积不改变单步的显存。</translation>
    </message>
    <message>
        <source>Gradient &amp;accumulation:</source>
        <translation>梯度累积(&amp;A)：</translation>
    </message>
    <message>
        <source>Capacity kept free for safety (other processes, allocator spikes): a batch fits only below the dashed line.</source>
        <translation>为安全起见预留的显存（其他进程、分配器的瞬时高峰）：只有在虚线以下才算放得下。</translation>
    </message>
    <message>
        <source>Safety margin:</source>
        <translation>安全余量：</translation>
    </message>
    <message>
        <source>Override</source>
        <translation>手动指定</translation>
    </message>
    <message>
        <source>CUDA conte&amp;xt:</source>
        <translation>CUDA 上下文(&amp;X)：</translation>
    </message>
    <message>
        <source>zero_grad(set_to_none=True)</source>
        <translation>zero_grad(set_to_none=True)</translation>
    </message>
    <message>
        <source>Free the gradients between steps (PyTorch&apos;s default). Unchecked, gradients stay allocated during the next forward pass.</source>
        <translation>在两步之间释放梯度（PyTorch 默认行为）。不勾选时，梯度在下一次前向传播期间仍占用显存。</translation>
    </message>
    <message>
        <source>Offload optimizer states to CPU</source>
        <translation>把优化器状态卸载到 CPU</translation>
    </message>
    <message>
        <source>Optimizer states and master weights live in host memory (DeepSpeed/FSDP style).</source>
        <translation>优化器状态和主权重放在主机内存中（DeepSpeed/FSDP 的做法）。</translation>
    </message>
    <message>
        <source>Simulate the first step</source>
        <translation>模拟第一步</translation>
    </message>
    <message>
        <source>Step 1 creates the optimizer states inside optimizer.step(); later steps start with them allocated (the default).</source>
        <translation>第一步会在 optimizer.step() 中创建优化器状态；之后每一步开始时它们已经分配好（默认模拟这种稳定状态）。</translation>
    </message>
    <message>
        <source>Optimizer: %1</source>
        <translation>优化器：%1</translation>
    </message>
    <message>
        <source>Optimizer implementation: %1</source>
        <translation>优化器实现：%1</translation>
    </message>
    <message>
        <source>AMSGrad on</source>
        <translation>开启 AMSGrad</translation>
    </message>
    <message>
        <source>AMSGrad off</source>
        <translation>关闭 AMSGrad</translation>
    </message>
    <message>
        <source>Precision: %1</source>
        <translation>精度：%1</translation>
    </message>
    <message>
        <source>Checkpointing: %1</source>
        <translation>梯度检查点：%1</translation>
    </message>
    <message>
        <source>Checkpoint every %1 blocks</source>
        <translation>每 %1 个模块做一次检查点</translation>
    </message>
    <message>
        <source>Gradient accumulation: %1</source>
        <translation>梯度累积：%1</translation>
    </message>
    <message>
        <source>Safety margin: %1%</source>
        <translation>安全余量：%1%</translation>
    </message>
    <message>
        <source>CUDA context</source>
        <translation>CUDA 上下文</translation>
    </message>
    <message>
        <source>zero_grad(set_to_none)</source>
        <translation>zero_grad(set_to_none)</translation>
    </message>
    <message>
        <source>Offload optimizer states</source>
        <translation>卸载优化器状态</translation>
    </message>
    <message>
        <source>Keep optimizer states on the GPU</source>
        <translation>优化器状态留在 GPU 上</translation>
    </message>
    <message>
        <source>Simulate a steady-state step</source>
        <translation>模拟稳定状态下的一步</translation>
    </message>
    <message>
        <source>Custom capacity</source>
        <translation>自定义容量</translation>
    </message>
    <message>
        <source>C&amp;ustom capacity:</source>
        <translation>自定义容量(&amp;U)：</translation>
    </message>
    <message>
        <source>2.x (default)</source>
        <translation>2.x（默认）</translation>
    </message>
    <message>
        <source>Whose autograd formulas decide what a step saves. PyTorch 1.13 kept a little more (e.g. the input of a mean over dims or a global average pool).</source>
        <translation>按哪个版本的 autograd 公式计算一步保存的张量。PyTorch 1.13 会多保存一些（例如按维度求均值或全局平均池化的输入）。</translation>
    </message>
    <message>
        <source>PyTorch:</source>
        <translation>PyTorch：</translation>
    </message>
    <message>
        <source>PyTorch %1</source>
        <translation>PyTorch %1</translation>
    </message>
    <message>
        <source>PyTorch&apos;s optimizer implementation: foreach groups tensors and needs temporary copies during the step; for-loop needs them for one tensor at a time, fused almost none. The default is what torch picks on a GPU: foreach in 2.x, for-loop in 1.13.</source>
        <translation>PyTorch 优化器的实现方式：foreach 把张量分组处理，step 期间需要临时副本；for-loop 每次只需一个张量的临时副本；fused 几乎不需要。默认值即 torch 在 GPU 上的选择：2.x 为 foreach，1.13 为 for-loop。</translation>
    </message>
    <message>
        <source>default: %1</source>
        <translation>默认：%1</translation>
    </message>
    <message>
        <source>reentrant</source>
        <translation>可重入</translation>
    </message>
    <message>
        <source>non-reentrant</source>
        <translation>非重入</translation>
    </message>
    <message>
        <source>torch.utils.checkpoint&apos;s use_reentrant. Reentrant (the default in torch 2.6 and Hugging Face) keeps each recomputed block&apos;s output until the block&apos;s backward ends; non-reentrant (use_reentrant=False, recommended by PyTorch) stops recomputing after the last tensor the backward needs.</source>
        <translation>torch.utils.checkpoint 的 use_reentrant 参数。可重入模式（torch 2.6 与 Hugging Face 的默认）会一直保留每个重算块的输出，直到该块的反向结束；非重入模式（use_reentrant=False，PyTorch 推荐）在反向所需的最后一个张量重算完成后即停止重算。</translation>
    </message>
    <message>
        <source>Checkpoint mode: %1</source>
        <translation>检查点模式：%1</translation>
    </message>
    <message>
        <source>Checkpoint mode:</source>
        <translation>检查点模式：</translation>
    </message>
    <message>
        <source>Paged AdamW (bitsandbytes)</source>
        <translation>分页 AdamW（bitsandbytes）</translation>
    </message>
    <message>
        <source>Paged 8-bit AdamW (bitsandbytes)</source>
        <translation>分页 8 位 AdamW（bitsandbytes）</translation>
    </message>
    <message>
        <source>Allocator settings: PyTorch&apos;s defaults</source>
        <translation>分配器设置：PyTorch 的默认设置</translation>
    </message>
    <message>
        <source>Allocator settings: %1</source>
        <translation>分配器设置：%1</translation>
    </message>
    <message>
        <source>Earlier batch lengths: none</source>
        <translation>之前批次的长度：无</translation>
    </message>
    <message>
        <source>Earlier batch lengths: %1</source>
        <translation>之前批次的长度：%1</translation>
    </message>
    <message>
        <source>Samples per epoch: %1</source>
        <translation>每个 epoch 的样本数：%1</translation>
    </message>
    <message>
        <source>Samples per epoch: not set</source>
        <translation>每个 epoch 的样本数：未设置</translation>
    </message>
    <message>
        <source>Search GPUs…</source>
        <translation>搜索 GPU…</translation>
    </message>
    <message>
        <source>Memory outside PyTorch&apos;s allocator: the CUDA context, cuBLAS and cuDNN kernels, NCCL buffers. By default BatchFit adds them up for this GPU and step (see the breakdown&apos;s tooltip). Your own figure replaces all of them. To measure it, after one training step: free, total = torch.cuda.mem_get_info(); the figure is total - free - torch.cuda.memory_reserved() (with no other process on the GPU).</source>
        <translation>PyTorch 分配器之外的显存：CUDA 上下文、cuBLAS 和 cuDNN 内核、NCCL 缓冲区。默认由 BatchFit 按此 GPU 和训练步骤逐项相加（见明细表的提示）。您填写的数值将替代全部各项。测量方法：训练一步之后执行 free, total = torch.cuda.mem_get_info()，数值为 total - free - torch.cuda.memory_reserved()（GPU 上没有其他进程时）。</translation>
    </message>
    <message>
        <source>Eager CUDA module loading</source>
        <translation>CUDA 模块预先加载（EAGER）</translation>
    </message>
    <message>
        <source>CUDA_MODULE_LOADING=EAGER, or torch older than 1.13, or CUDA older than 11.7: every kernel image loads at start-up, about 900 MiB more outside PyTorch&apos;s allocator. Newer stacks load kernels lazily (the default).</source>
        <translation>CUDA_MODULE_LOADING=EAGER，或 torch 早于 1.13、CUDA 早于 11.7：启动时加载全部内核映像，在 PyTorch 分配器之外多占约 900 MiB。较新的环境按需（延迟）加载内核（默认）。</translation>
    </message>
    <message>
        <source>Lazy CUDA module loading</source>
        <translation>CUDA 模块延迟加载</translation>
    </message>
    <message>
        <source>full logits (transformers)</source>
        <translation>完整 logits（transformers）</translation>
    </message>
    <message>
        <source>TRL fused head (TRL 1.15+)</source>
        <translation>TRL 融合输出头（TRL 1.15+）</translation>
    </message>
    <message>
        <source>TRL chunked (TRL 1.9-1.14)</source>
        <translation>TRL 分块（TRL 1.9-1.14）</translation>
    </message>
    <message>
        <source>LM loss: %1</source>
        <translation>语言模型损失：%1</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Where the tensors saved for the backward wait: on the GPU, or in host memory, copied back when their backward runs. transformers 5 (activation_checkpointing_kwargs offload=True) moves each checkpointed layer&apos;s input to pinned host memory; torch&apos;s save_on_cpu around the forward moves every saved tensor, the weights too. The GPU figure drops; host memory and PCIe copies are shown beside it.</source>
        <translation>为反向保存的张量存放在哪里：GPU 上，或主机内存中（反向运行时再拷回）。transformers 5（activation_checkpointing_kwargs offload=True）把每个检查点层的输入移到锁页主机内存；在前向外包 torch 的 save_on_cpu 会移走所有保存的张量，包括权重。GPU 显存随之下降；主机内存和 PCIe 拷贝量显示在旁边。</translation>
    </message>
    <message>
        <source>Activation offload:</source>
        <translation>激活卸载：</translation>
    </message>
    <message>
        <source>Activation offload: %1</source>
        <translation>激活卸载：%1</translation>
    </message>
    <message>
        <source>Offload parameter shards to CPU (ZeRO-3 / FSDP)</source>
        <translation>把参数分片卸载到 CPU（ZeRO-3 / FSDP）</translation>
    </message>
    <message>
        <source>DeepSpeed ZeRO-3 offload_param (ZeRO-Infinity) or FSDP CPUOffload(offload_params=True): each GPU&apos;s parameter and gradient shards live in host memory and the optimizer steps there; a block&apos;s parameters come to the GPU only while it runs. Needs a strategy that shards parameters (one GPU is enough).</source>
        <translation>DeepSpeed ZeRO-3 offload_param（ZeRO-Infinity）或 FSDP CPUOffload(offload_params=True)：每张 GPU 的参数分片和梯度分片存放在主机内存中，优化器在那里更新；一个模块的参数只在它运行时才到 GPU。需要一种对参数分片的策略（一张 GPU 即可）。</translation>
    </message>
    <message>
        <source>Offload parameter shards</source>
        <translation>卸载参数分片</translation>
    </message>
    <message>
        <source>Keep parameter shards on the GPU</source>
        <translation>参数分片留在 GPU 上</translation>
    </message>
    <message>
        <source>checkpoint inputs (transformers)</source>
        <translation>检查点输入（transformers）</translation>
    </message>
    <message>
        <source>all saved (save_on_cpu)</source>
        <translation>全部保存的张量（save_on_cpu）</translation>
    </message>
    <message>
        <source>all saved, pinned (save_on_cpu)</source>
        <translation>全部保存的张量，锁页（save_on_cpu）</translation>
    </message>
    <message>
        <source>Liger fused cross-entropy</source>
        <translation>Liger 融合交叉熵</translation>
    </message>
    <message>
        <source>How a language model&apos;s head and loss run. Full: transformers&apos; loss over the whole [tokens x vocabulary] logits, upcast to fp32. TRL&apos;s SFTTrainer never makes those logits: since TRL 1.15 a fused head folds them in tiles; TRL 1.9 to 1.14 computed them 256 tokens at a time, checkpointed. Liger&apos;s fused linear cross-entropy (use_liger_kernel) computes the head&apos;s gradients in the forward, in chunks. At long context the logits are often the peak.</source>
        <translation>语言模型的输出头和损失如何运行。完整：transformers 的损失作用于整个 [词元 × 词表] logits，并上转为 fp32。TRL 的 SFTTrainer 从不生成这些 logits：TRL 1.15 起用融合输出头按分块折叠；TRL 1.9 到 1.14 每次计算 256 个词元并做检查点。Liger 的融合线性交叉熵（use_liger_kernel）在前向中分块算出输出头的梯度。长上下文时峰值常常在 logits。</translation>
    </message>
    <message>
        <source>Recipe: %1</source>
        <translation>训练方式：%1</translation>
    </message>
    <message>
        <source>Recipe, LM loss:</source>
        <translation>训练方式、LM 损失：</translation>
    </message>
    <message>
        <source>SFT</source>
        <translation>SFT</translation>
    </message>
    <message>
        <source>DPO</source>
        <translation>DPO</translation>
    </message>
    <message>
        <source>DPO, ref. precomputed</source>
        <translation>DPO，参考预计算</translation>
    </message>
    <message>
        <source>GRPO</source>
        <translation>GRPO</translation>
    </message>
    <message>
        <source>GRPO, with reference (beta &gt; 0)</source>
        <translation>GRPO，带参考模型（beta &gt; 0）</translation>
    </message>
    <message>
        <source>prompt </source>
        <translation>提示 </translation>
    </message>
    <message>
        <source>Prompt tokens: %1</source>
        <translation>提示 token 数：%1</translation>
    </message>
    <message>
        <source>What a step trains on: SFT (supervised fine-tuning), DPO or GRPO. DPO (TRL&apos;s DPOTrainer): the batch counts chosen/rejected pairs, run as twice as many sequences, with log-probabilities from TRL&apos;s fused head; after the policy&apos;s forward a reference forward runs without gradients, on the base model under LoRA, else on a frozen copy of the model kept on the GPU. Precomputed (precompute_ref_log_probs=True) computes the reference once before training: neither the forward nor the copy is in the step. GRPO (TRL&apos;s GRPOTrainer): the batch counts completions; transformers&apos; generate() makes batch x accumulation of them before the first micro-batch, its KV cache on this GPU; with beta &gt; 0 the reference&apos;s log-probabilities follow. DPO and GRPO always run TRL&apos;s fused head: under GRPO the box beside gives the prompt&apos;s tokens (the completion is the rest of the sequence).</source>
        <translation>一步训练的内容：SFT（监督微调）、DPO 或 GRPO。DPO（TRL 的 DPOTrainer）：批大小按 chosen/rejected 偏好对计数，实际运行两倍数量的序列，对数概率来自 TRL 的融合输出头；策略模型前向之后，参考模型在无梯度下再做一次前向：LoRA 时用基座模型，否则用保存在 GPU 上的模型冻结副本。预计算（precompute_ref_log_probs=True）在训练前一次算好参考结果：训练步中既没有这次前向，也没有副本。GRPO（TRL 的 GRPOTrainer）：批大小按补全计数；transformers 的 generate() 在第一个微批次前生成 批大小 × 梯度累积 条补全，其 KV 缓存在本 GPU 上；beta &gt; 0 时随后计算参考模型的对数概率。DPO 和 GRPO 总是使用 TRL 的融合输出头：GRPO 下旁边的输入框给出提示的 token 数（补全是序列的其余部分）。</translation>
    </message>
    <message>
        <source>prompt: TRL&apos;s default</source>
        <translation>提示：TRL 默认</translation>
    </message>
    <message>
        <source>GRPO: the prompt&apos;s tokens; the completion (max_completion_length) is the rest of the model&apos;s sequence. 0: TRL&apos;s default max_completion_length, 512 tokens, after the prompt.</source>
        <translation>GRPO：提示的 token 数；补全（max_completion_length）是模型序列的其余部分。0：按 TRL 默认的 max_completion_length（512 个 token）放在提示之后。</translation>
    </message>
</context>
<context>
    <name>batchfit::WhatIfPanel</name>
    <message>
        <source>Changes you have not made yet, best first. Double-click or press Apply to make one (Ctrl+Z undoes it).</source>
        <translation>尚未采用的调整，效果最好的排在前面。双击或点击“应用”即可采用（Ctrl+Z 撤销）。</translation>
    </message>
    <message>
        <source>Appl&amp;y</source>
        <translation>应用(&amp;Y)</translation>
    </message>
    <message>
        <source>Apply the selected change to the training set-up (undoable).</source>
        <translation>把选中的调整应用到训练配置（可撤销）。</translation>
    </message>
    <message>
        <source>Working out what would help…</source>
        <translation>正在分析哪些调整有帮助…</translation>
    </message>
    <message>
        <source>Every lever BatchFit knows is already pulled.</source>
        <translation>BatchFit 知道的调整都已经用上了。</translation>
    </message>
    <message>
        <source>Apply &amp;Together</source>
        <translation>一起应用(&amp;T)</translation>
    </message>
    <message>
        <source>Make every change of the plan in one step (Ctrl+Z undoes it).</source>
        <translation>一步做完方案里的所有调整（Ctrl+Z 可撤销）。</translation>
    </message>
    <message>
        <source>Together, %1 make batch %2 fit (largest %3).</source>
        <translation>%1 一起用上，批大小 %2 就放得下（最大 %3）。</translation>
    </message>
    <message>
        <source>Even together, %1 do not make batch %2 fit (largest %3).</source>
        <translation>即使 %1 一起用上，批大小 %2 仍然放不下（最大 %3）。</translation>
    </message>
    <message>
        <source>No change BatchFit knows makes batch %1 fit.</source>
        <translation>BatchFit 知道的调整都不能让批大小 %1 放得下。</translation>
    </message>
    <message>
        <source>The smallest GPU in the catalogue that fits batch %1 as set up now: %2 (%3).</source>
        <translation>按当前配置，能放下批大小 %1 的显存最小的 GPU：%2（%3）。</translation>
    </message>
    <message>
        <source>No GPU in the catalogue fits batch %1 as set up now.</source>
        <translation>按当前配置，GPU 列表里没有能放下批大小 %1 的。</translation>
    </message>
    <message numerus="yes">
        <source>Largest batch now: %1. None of the %n changes BatchFit knows gains 1% or more.</source>
        <translation>
            <numerusform>当前最大批：%1。BatchFit 知道的 %n 项调整都提升不到 1%。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n change(s) that gain less than 1% are not shown.</source>
        <translation>
            <numerusform>提升不到 1% 的 %n 项调整未列出。</numerusform>
        </translation>
    </message>
    <message>
        <source>Largest batch now: %1. Each change below is evaluated by the estimator on its own.</source>
        <translation>当前最大批：%1。下面每项调整都由估算器单独评估。</translation>
    </message>
    <message>
        <source>Not even batch 1 fits. Every change BatchFit knows, those that make it fit first, then by the memory each saves at batch 1.</source>
        <translation>批大小为 1 也放不下。下面列出 BatchFit 知道的所有改动：能让它放下的排在前面，其余按批大小为 1 时各自节省的显存排序。</translation>
    </message>
    <message>
        <source>Not even batch 1 fits, and no single change is enough. Every change BatchFit knows, by the memory each saves at batch 1; the plan below combines those that come closest.</source>
        <translation>批大小为 1 也放不下，任何单项改动都不够。下面按批大小为 1 时各自节省的显存列出 BatchFit 知道的所有改动；下方的方案把最接近的几项组合起来。</translation>
    </message>
    <message>
        <source>Even together, %1 do not make batch 1 fit; they come closest: with them batch 1 needs %2.</source>
        <translation>即使同时采用 %1，批大小为 1 也放不下；这已是最接近的组合：采用后批大小为 1 仍需 %2。</translation>
    </message>
</context>
</TS>
