<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>batchfit::ReportText</name>
    <message>
        <source>Verdict</source>
        <translation>结论</translation>
    </message>
    <message>
        <source> (continued)</source>
        <translation>（续）</translation>
    </message>
    <message>
        <source>GPU memory report</source>
        <translation>GPU 显存报告</translation>
    </message>
    <message>
        <source>%1 parameters · %2 layers · input %3 %4</source>
        <translation>%1 个参数 · %2 层 · 输入 %3 %4</translation>
    </message>
    <message>
        <source>GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>Micro-batch</source>
        <translation>微批大小</translation>
    </message>
    <message>
        <source>, states in host memory</source>
        <translation>，状态存于主机内存</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source> (every %1 blocks)</source>
        <translation>（每 %1 个块）</translation>
    </message>
    <message>
        <source>Checkpointing</source>
        <translation>激活检查点</translation>
    </message>
    <message>
        <source>Accumulation</source>
        <translation>梯度累积</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>Safety margin</source>
        <translation>安全余量</translation>
    </message>
    <message>
        <source>%1 of capacity</source>
        <translation>容量的 %1</translation>
    </message>
    <message>
        <source>Step simulated</source>
        <translation>模拟的训练步</translation>
    </message>
    <message>
        <source>first step</source>
        <translation>第一步</translation>
    </message>
    <message>
        <source>steady state</source>
        <translation>稳态</translation>
    </message>
    <message>
        <source>batch %1 · %2, %3, checkpointing %4 · %5 (%6)</source>
        <translation>批大小 %1 · %2，%3，检查点 %4 · %5（%6）</translation>
    </message>
    <message>
        <source>Batch %1 fits on %2</source>
        <translation>批大小 %1 可以放入 %2</translation>
    </message>
    <message>
        <source>Batch %1 does not fit on %2</source>
        <translation>批大小 %1 放不进 %2</translation>
    </message>
    <message>
        <source>Needs %1 of %2 usable (%3); %4 to spare.</source>
        <translation>需要 %1，可用 %2（占可用的 %3）；还剩 %4。</translation>
    </message>
    <message>
        <source>Needs %1 but only %2 is usable: short by %3.</source>
        <translation>需要 %1，但只有 %2 可用：还差 %3。</translation>
    </message>
    <message>
        <source>Not even batch 1 fits on this GPU with this set-up.</source>
        <translation>在此 GPU 和当前设置下，连批大小 1 都放不下。</translation>
    </message>
    <message>
        <source>Largest batch that fits: more than %1 (the solver&apos;s limit).</source>
        <translation>可放入的最大批大小：超过 %1（求解器上限）。</translation>
    </message>
    <message>
        <source>Largest batch that fits: %1 · largest multiple of 8: %2</source>
        <translation>可放入的最大批大小：%1 · 其中最大的 8 的倍数：%2</translation>
    </message>
    <message>
        <source>Peak allocated %1 during %2, at %3</source>
        <translation>显存峰值 %1，出现在%2：%3</translation>
    </message>
    <message>
        <source>Memory at the peak (batch %1)</source>
        <translation>峰值时的显存（批大小 %1）</translation>
    </message>
    <message>
        <source>Component</source>
        <translation>组成部分</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Bytes</source>
        <translation>字节数</translation>
    </message>
    <message>
        <source>% of capacity</source>
        <translation>占容量</translation>
    </message>
    <message>
        <source>Peak allocated</source>
        <translation>显存峰值（已分配）</translation>
    </message>
    <message>
        <source>Allocator reserve</source>
        <translation>分配器预留</translation>
    </message>
    <message>
        <source>Required (nvidia-smi)</source>
        <translation>所需显存（nvidia-smi）</translation>
    </message>
    <message>
        <source>Usable (minus %1 margin)</source>
        <translation>可用（扣除 %1 余量）</translation>
    </message>
    <message>
        <source>GPU capacity</source>
        <translation>GPU 容量</translation>
    </message>
    <message>
        <source>Headroom</source>
        <translation>剩余</translation>
    </message>
    <message>
        <source>Short by</source>
        <translation>缺口</translation>
    </message>
    <message>
        <source>Host memory (offloaded optimizer)</source>
        <translation>主机内存（卸载的优化器）</translation>
    </message>
    <message>
        <source>Top layers by activation memory</source>
        <translation>激活显存最多的层</translation>
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
        <source>Memory by batch size</source>
        <translation>显存随批大小的变化</translation>
    </message>
    <message>
        <source>Memory through one training step (batch %1)</source>
        <translation>一个训练步中的显存变化（批大小 %1）</translation>
    </message>
    <message>
        <source>Assumptions</source>
        <translation>假设</translation>
    </message>
    <message>
        <source>Every figure is computed by the BatchFit estimator from the model&apos;s layers and the set-up above; nothing in this report was measured on a GPU.</source>
        <translation>本报告的所有数字均由 BatchFit 估算器根据模型各层和上述设置计算得出，没有任何数字是在 GPU 上实测的。</translation>
    </message>
    <message>
        <source>The marks labelled &quot;measured&quot; on the chart were supplied by the user.</source>
        <translation>图中标为“实测”的点由用户提供。</translation>
    </message>
    <message>
        <source>Peak allocated is what torch.cuda.max_memory_allocated() would report: the tensors live at the step&apos;s peak, each rounded up as PyTorch&apos;s caching allocator rounds requests.</source>
        <translation>显存峰值即 torch.cuda.max_memory_allocated() 会报告的值：训练步峰值时存活的张量，每个都按 PyTorch 缓存分配器的规则向上取整。</translation>
    </message>
    <message>
        <source>Allocator reserve: %1, taken as %2 of the peak allocated, for the caching allocator&apos;s segments and fragmentation (reserved minus allocated).</source>
        <translation>分配器预留：%1，按显存峰值的 %2 计算，用于缓存分配器的内存段和碎片（预留减去已分配）。</translation>
    </message>
    <message>
        <source>Required = reserved + CUDA context: what nvidia-smi would show at the peak. A batch fits when the required memory is at most the usable memory.</source>
        <translation>所需显存 = 预留显存 + CUDA 上下文，即峰值时 nvidia-smi 会显示的值。所需显存不超过可用显存时，该批大小即可放入。</translation>
    </message>
    <message>
        <source>Safety margin: %1 of the capacity is held back, so %2 of %3 is usable.</source>
        <translation>安全余量：保留容量的 %1，因此 %3 中有 %2 可用。</translation>
    </message>
    <message>
        <source>cuBLAS workspace: %1 per handle, counted in temporaries when the model multiplies matrices.</source>
        <translation>cuBLAS 工作区：每个句柄 %1，模型含矩阵乘法时计入临时缓冲区。</translation>
    </message>
    <message>
        <source>First training step: optimizer states are created inside optimizer.step().</source>
        <translation>第一个训练步：优化器状态在 optimizer.step() 中创建。</translation>
    </message>
    <message>
        <source>Steady state: optimizer states already exist when the step starts.</source>
        <translation>稳态：训练步开始时优化器状态已经存在。</translation>
    </message>
    <message>
        <source>Gradients are freed between steps (zero_grad(set_to_none=True)).</source>
        <translation>梯度在两个训练步之间被释放（zero_grad(set_to_none=True)）。</translation>
    </message>
    <message>
        <source>Gradients stay allocated between steps (zero_grad(set_to_none=False)).</source>
        <translation>梯度在两个训练步之间保持分配（zero_grad(set_to_none=False)）。</translation>
    </message>
    <message>
        <source>Optimizer states and master weights live in host memory: %1 of host RAM, not on the GPU.</source>
        <translation>优化器状态和主权重存于主机内存：占用 %1 主机内存，不占 GPU 显存。</translation>
    </message>
    <message>
        <source>GPU memory size: %1 (source: %2).</source>
        <translation>GPU 显存大小：%1（来源：%2）。</translation>
    </message>
    <message>
        <source>What the components are</source>
        <translation>各组成部分的含义</translation>
    </message>
    <message>
        <source>Parameters: the model&apos;s weights and buffers on the GPU.</source>
        <translation>模型参数：模型在 GPU 上的权重和缓冲区（buffer）。</translation>
    </message>
    <message>
        <source>Gradients: the .grad tensors of the trainable parameters that are live at the peak.</source>
        <translation>梯度：峰值时存活的可训练参数的 .grad 张量。</translation>
    </message>
    <message>
        <source>Optimizer states: e.g. Adam&apos;s exp_avg and exp_avg_sq, and master weights in mixed precision.</source>
        <translation>优化器状态：如 Adam 的 exp_avg 和 exp_avg_sq，以及混合精度训练中的主权重。</translation>
    </message>
    <message>
        <source>Activations: the tensors autograd saves for the backward pass (the layer table attributes each to the layer that created it).</source>
        <translation>激活：autograd 为反向传播保存的张量（层表把每个张量归到创建它的层）。</translation>
    </message>
    <message>
        <source>Temporaries: short-lived buffers live at the peak, such as an op&apos;s intermediate results, gradients being computed and cuBLAS workspaces.</source>
        <translation>临时缓冲区：峰值时存活的短期缓冲区，如算子的中间结果、正在计算的梯度和 cuBLAS 工作区。</translation>
    </message>
    <message>
        <source>Allocator reserve and CUDA context: memory nvidia-smi shows beyond the allocated tensors.</source>
        <translation>分配器预留和 CUDA 上下文：nvidia-smi 显示的、超出已分配张量的那部分显存。</translation>
    </message>
    <message>
        <source>Generated by BatchFit %1 on %2</source>
        <translation>由 BatchFit %1 生成于 %2</translation>
    </message>
    <message>
        <source>Page %1 of %2</source>
        <translation>第 %1 页，共 %2 页</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>模型参数</translation>
    </message>
    <message>
        <source>Gradients</source>
        <translation>梯度</translation>
    </message>
    <message>
        <source>Optimizer states</source>
        <translation>优化器状态</translation>
    </message>
    <message>
        <source>Activations</source>
        <translation>激活</translation>
    </message>
    <message>
        <source>Temporaries</source>
        <translation>临时缓冲区</translation>
    </message>
    <message>
        <source>Setup</source>
        <translation>准备</translation>
    </message>
    <message>
        <source>Forward</source>
        <translation>前向传播</translation>
    </message>
    <message>
        <source>Backward</source>
        <translation>反向传播</translation>
    </message>
    <message>
        <source>Optimizer step</source>
        <translation>优化器更新</translation>
    </message>
    <message>
        <source>Allocator reserve + CUDA context</source>
        <translation>分配器预留 + CUDA 上下文</translation>
    </message>
    <message>
        <source>Usable (minus margin)</source>
        <translation>可用（扣除余量）</translation>
    </message>
    <message>
        <source>Chosen batch</source>
        <translation>所选批大小</translation>
    </message>
    <message>
        <source>Largest batch that fits</source>
        <translation>可放入的最大批大小</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>实测</translation>
    </message>
    <message>
        <source>Micro-batch size</source>
        <translation>微批大小</translation>
    </message>
    <message>
        <source>capacity %1 · usable %2</source>
        <translation>容量 %1 · 可用 %2</translation>
    </message>
    <message>
        <source>batch %1</source>
        <translation>批大小 %1</translation>
    </message>
    <message>
        <source>max %1</source>
        <translation>最大 %1</translation>
    </message>
    <message>
        <source>Peak</source>
        <translation>峰值</translation>
    </message>
    <message>
        <source>Ops in execution order</source>
        <translation>按执行顺序排列的算子</translation>
    </message>
    <message>
        <source>Peak %1 (%2)</source>
        <translation>峰值 %1（%2）</translation>
    </message>
    <message>
        <source>%1 micro-batches per step (effective batch %2)</source>
        <translation>每步 %1 个微批（等效批大小 %2）</translation>
    </message>
    <message>
        <source>torch.cuda.max_memory_allocated(), against the estimated peak allocated</source>
        <translation>torch.cuda.max_memory_allocated()，对比估算的显存峰值</translation>
    </message>
    <message>
        <source>parameters + gradients + optimizer states + saved activations, as PyTorch counted them</source>
        <translation>PyTorch 统计的模型参数 + 梯度 + 优化器状态 + 保存的前向激活</translation>
    </message>
    <message>
        <source>Measured at batch %1 (%2): %3; the estimate of the same figure is %4 (%5 of the measured).</source>
        <translation>批大小 %1 的实测值（%2）：%3；同一指标的估算值为 %4（为实测值的 %5）。</translation>
    </message>
    <message>
        <source>Estimate of the measured figure (label: its error)</source>
        <translation>实测指标的估算值（标注为其误差）</translation>
    </message>
    <message>
        <source>batch %1: %2</source>
        <translation>批大小 %1：%2</translation>
    </message>
    <message>
        <source>full training</source>
        <translation>全量训练</translation>
    </message>
    <message>
        <source>LoRA r=%1 α=%2 dropout %3, %4</source>
        <translation>LoRA r=%1 α=%2 dropout %3，%4</translation>
    </message>
    <message>
        <source>PEFT&apos;s default targets</source>
        <translation>PEFT 默认目标层</translation>
    </message>
    <message>
        <source>frozen layers</source>
        <translation>冻结部分层</translation>
    </message>
    <message>
        <source>: %1 of %2 train</source>
        <translation>：%2 个参数中 %1 个参与训练</translation>
    </message>
    <message>
        <source>Fine-tuning</source>
        <translation>微调</translation>
    </message>
    <message>
        <source>Frozen parameters (requires_grad=False) get no gradients and no optimizer states; layers before the first trainable one save nothing for the backward pass.</source>
        <translation>冻结的参数（requires_grad=False）没有反向梯度和优化器状态；第一个可训练层之前的层不为反向传播保存任何前向激活。</translation>
    </message>
    <message>
        <source>LoRA as PEFT runs it: adapters in fp32 on half weights (autocast_adapter_dtype), each adapted input copied to their dtype, one dropout per adapted layer.</source>
        <translation>LoRA 按 PEFT 的实现计算：半精度权重上的适配器为 fp32（autocast_adapter_dtype），每个适配层的输入复制为适配器的数据类型，每个适配层各有一个 dropout。</translation>
    </message>
    <message>
        <source> · LoRA r=%1</source>
        <translation> · LoRA r=%1</translation>
    </message>
    <message>
        <source> · %1 of %2 parameters train</source>
        <translation> · %2 个参数中 %1 个参与训练</translation>
    </message>
    <message>
        <source>; %1%2 base weights (%3 parameters in %4)</source>
        <translation>；%1%2 基座权重（%3 个参数，共 %4）</translation>
    </message>
    <message>
        <source> double-quantized</source>
        <translation> 双重量化</translation>
    </message>
    <message>
        <source> · QLoRA r=%1 (%2)</source>
        <translation> · QLoRA r=%1（%2）</translation>
    </message>
    <message>
        <source>Paged optimizer states (CUDA managed memory)</source>
        <translation>分页优化器状态（CUDA 托管内存）</translation>
    </message>
    <message>
        <source>Quantized base weights as bitsandbytes 0.49 stores and runs them: every linear but the output head and tied weights packed (4-bit codes with an absmax per 64, or int8 with a scale per row), dequantized into a temporary weight in each matmul, forward and backward; the 4-bit matmul saves no input (bitsandbytes 0.43.2 and later), the int8 one keeps it.</source>
        <translation>量化基座权重按 bitsandbytes 0.49 的存储和运行方式计算：除输出头和绑定权重外的每个线性层都被打包（4 位编码加每 64 个一个 absmax，或 int8 加每行一个缩放因子），前向和反向的每次矩阵乘法中反量化为临时权重；4 位矩阵乘法不保存输入（bitsandbytes 0.43.2 及以后），int8 的会保存。</translation>
    </message>
    <message>
        <source>prepare_model_for_kbit_training: the weights that are not quantized are fp32.</source>
        <translation>prepare_model_for_kbit_training：未量化的权重为 fp32。</translation>
    </message>
    <message>
        <source>Paged optimizer: %1 of states live in CUDA managed memory, outside PyTorch&apos;s counters and the peak; the driver moves them to host memory when the GPU runs short.</source>
        <translation>分页优化器：%1 的状态放在 CUDA 托管内存中，不计入 PyTorch 的统计和峰值；显存不足时驱动会把它们换到主机内存。</translation>
    </message>
    <message>
        <source>%1 on %2 GPUs, shards over %3; every figure is rank %4&apos;s (the most loaded); global batch %5</source>
        <translation>%2 张 GPU 上的 %1，分片范围 %3 张；所有数字都是 rank %4（负载最重）的；全局批大小 %5</translation>
    </message>
    <message>
        <source>; communication buckets %1</source>
        <translation>；通信桶 %1</translation>
    </message>
    <message>
        <source>; largest gathered unit %1: %2</source>
        <translation>；最大的聚合单元 %1：%2</translation>
    </message>
    <message>
        <source>Parallelism</source>
        <translation>并行</translation>
    </message>
    <message>
        <source> · %1 × %2</source>
        <translation> · %1 × %2</translation>
    </message>
    <message>
        <source>Data parallelism: one GPU of the group is simulated with its shards, the parameters it gathers and the buffers the framework allocates through PyTorch; NCCL&apos;s own buffers are outside PyTorch&apos;s allocator and not counted.</source>
        <translation>数据并行：模拟组中的一张 GPU，包括它的分片、它聚合的参数以及框架通过 PyTorch 分配的缓冲；NCCL 自己的缓冲不在 PyTorch 分配器中，不计入。</translation>
    </message>
    <message>
        <source>; tensor parallel %1</source>
        <translation>；张量并行 %1</translation>
    </message>
    <message>
        <source>; tensor parallel %1 with sequence parallelism</source>
        <translation>；张量并行 %1，带序列并行</translation>
    </message>
    <message>
        <source>; pipeline %1 stages, the last shown, the heavier (%2 micro-batches in flight)</source>
        <translation>；流水线 %1 个阶段，显示占用更大的最后一个（同时在途 %2 个微批）</translation>
    </message>
    <message>
        <source>; pipeline %1 stages, the first shown, the heavier (%2 micro-batches in flight)</source>
        <translation>；流水线 %1 个阶段，显示占用更大的第一个（同时在途 %2 个微批）</translation>
    </message>
    <message>
        <source>Allocator reserve: %1, from a replay of the step&apos;s allocations through PyTorch&apos;s CUDA caching allocator (%2; %3 iterations): reserved peaks at %4, of which %5 are free pieces of split segments that cannot be returned.</source>
        <translation>分配器预留：%1，来自用 PyTorch CUDA 缓存分配器回放这一步的分配（%2；%3 次迭代）：预留峰值为 %4，其中 %5 是已拆分内存段中无法归还的空闲碎片。</translation>
    </message>
    <message>
        <source>default settings</source>
        <translation>默认设置</translation>
    </message>
    <message>
        <source>Sequence parallelism as Megatron-LM runs it: norms, dropouts and the residual stream split along the sequence over the tensor-parallel GPUs; each column-parallel linear gathers its input into one buffer kept for the whole step, saves only its own part and gathers it again in the backward.</source>
        <translation>序列并行按 Megatron-LM 的实现：归一化、dropout 和残差流沿序列切分到张量并行的各张 GPU 上；每个列并行线性层把输入 all-gather 到一个整步都保留的缓冲中，只保存自己那一份，反向传播时再 all-gather 一次。</translation>
    </message>
    <message>
        <source>Pipeline parallelism, 1F1B: the first stage (the embedding) and the last (the head and the loss) are simulated and the one that needs more is shown; interleaved schedules are not modelled.</source>
        <translation>流水线并行（1F1B）：模拟第一个阶段（嵌入层）和最后一个阶段（输出头和损失），显示需要显存更多的那个；交错调度不在模型之内。</translation>
    </message>
    <message>
        <source>not replayed: fragmentation override %1</source>
        <translation>未回放：手动指定碎片比例 %1</translation>
    </message>
    <message>
        <source>not set (PyTorch&apos;s defaults)</source>
        <translation>未设置（PyTorch 默认值）</translation>
    </message>
    <message>
        <source>Peak reserved (replay)</source>
        <translation>预留峰值（回放）</translation>
    </message>
    <message>
        <source>Free in split segments</source>
        <translation>拆分段内空闲</translation>
    </message>
    <message>
        <source>Peak reserved (fragmentation override)</source>
        <translation>预留显存峰值（手动指定碎片比例）</translation>
    </message>
    <message>
        <source>PYTORCH_CUDA_ALLOC_CONF</source>
        <comment>set-up key: the allocator&apos;s settings</comment>
        <translation>分配器设置</translation>
    </message>
    <message>
        <source>On this GPU the first training step runs out of memory at %1, trying to allocate %2.</source>
        <translation>在这块 GPU 上，第一个训练步在 %1 处显存不足（尝试分配 %2）。</translation>
    </message>
    <message>
        <source>On this GPU the steady-state step runs out of memory at %1, trying to allocate %2.</source>
        <translation>在这块 GPU 上，稳定状态的训练步在 %1 处显存不足（尝试分配 %2）。</translation>
    </message>
    <message>
        <source>Batch lengths replayed</source>
        <translation>回放的批次长度</translation>
    </message>
    <message>
        <source>%1 (variable-length batches; the last is the step shown)</source>
        <translation>%1（变长批次；最后一个是所示的训练步）</translation>
    </message>
    <message>
        <source>Samples per epoch</source>
        <translation>每个 epoch 的样本数</translation>
    </message>
    <message>
        <source>%1 (the last batch, %2 samples, is replayed before the step shown)</source>
        <translation>%1（最后一个批次 %2 个样本，在所示训练步之前回放）</translation>
    </message>
    <message>
        <source>%1 (every batch full at this size)</source>
        <translation>%1（在这个批大小下每个批次都是满的）</translation>
    </message>
    <message>
        <source>On this GPU the epoch&apos;s last batch (%1 samples) runs out of memory at %2, trying to allocate %3.</source>
        <translation>在这块 GPU 上，epoch 的最后一个批次（%1 个样本）在 %2 处显存不足（尝试分配 %3）。</translation>
    </message>
    <message>
        <source>Batch %1 fits on %2 with cache flushes</source>
        <translation>批大小 %1 在 %2 上清空缓存后放得下</translation>
    </message>
    <message>
        <source>On a GPU large enough it would reserve %1; on this one PyTorch frees its cached blocks when a cudaMalloc fails and retries (no out-of-memory error, slower steps: each retry synchronizes the GPU).</source>
        <translation>在显存足够大的 GPU 上它会预留 %1；在这块 GPU 上，cudaMalloc 失败时 PyTorch 会释放缓存块后重试（不会显存溢出，但每次重试都要同步 GPU，训练变慢）。</translation>
    </message>
    <message>
        <source>Required here (nvidia-smi)</source>
        <translation>本 GPU 上所需（nvidia-smi）</translation>
    </message>
    <message>
        <source>On a GPU large enough</source>
        <translation>显存足够大的 GPU 上</translation>
    </message>
    <message>
        <source>Host memory (offloaded optimizer, per GPU)</source>
        <translation>主机内存（卸载的优化器，每张 GPU）</translation>
    </message>
    <message>
        <source>Host memory of a node (%1 GPUs)</source>
        <translation>一个节点的主机内存（%1 张 GPU）</translation>
    </message>
    <message>
        <source>On this GPU the replay, held to the usable memory, frees cached segments when a cudaMalloc fails and retries: the allocator reserve is %1 and the step needs %2 (the table&apos;s figures); the figures above are those of a GPU large enough.</source>
        <translation>在这块 GPU 上，回放限定在可用显存内，cudaMalloc 失败时会释放缓存的内存段后重试：分配器预留为 %1，这一步需要 %2（即表中的数字）；上面的数字是显存足够大的 GPU 上的。</translation>
    </message>
    <message>
        <source>Outside PyTorch</source>
        <translation>PyTorch 之外</translation>
    </message>
    <message>
        <source>CUDA context %1</source>
        <translation>CUDA 上下文 %1</translation>
    </message>
    <message>
        <source>cuBLAS kernels %1</source>
        <translation>cuBLAS 内核 %1</translation>
    </message>
    <message>
        <source>eager module loading %1</source>
        <translation>模块预先加载 %1</translation>
    </message>
    <message>
        <source>cuDNN %1</source>
        <translation>cuDNN %1</translation>
    </message>
    <message>
        <source>NCCL %1</source>
        <translation>NCCL %1</translation>
    </message>
    <message>
        <source>Outside PyTorch: %1 (%2). The CUDA driver and libraries hold it outside PyTorch&apos;s allocator; nvidia-smi counts it, torch.cuda.memory_reserved() does not.</source>
        <translation>PyTorch 之外：%1（%2）。这部分由 CUDA 驱动和各个库占用，不经过 PyTorch 的分配器；nvidia-smi 会计入，torch.cuda.memory_reserved() 不计入。</translation>
    </message>
    <message>
        <source>measured, set for this report</source>
        <translation>实测值，为本报告设定</translation>
    </message>
    <message>
        <source>for %1: %2</source>
        <translation>%1：%2</translation>
    </message>
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
        <source>%1 · %2 · %3 parameters · weights %4</source>
        <translation>%1 · %2 · %3 个参数 · 权重 %4</translation>
    </message>
    <message>
        <source>vLLM %1 (V1 engine)</source>
        <translation>vLLM %1（V1 引擎）</translation>
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
        <source>%1 on %2 · tensor parallel %3 × pipeline %4 · memory fraction %5 · max_model_len %6 · KV cache %7</source>
        <translation>%1，运行在 %2 · 张量并行 %3 × 流水线 %4 · 显存比例 %5 · max_model_len %6 · KV 缓存 %7</translation>
    </message>
    <message>
        <source>model dtype</source>
        <translation>模型精度</translation>
    </message>
    <message>
        <source>The engine would not start: %1</source>
        <translation>引擎无法启动：%1</translation>
    </message>
    <message>
        <source>fits: %1 × %2 tokens use %3 of the KV cache</source>
        <translation>放得下：%1 × %2 token 占 KV 缓存的 %3</translation>
    </message>
    <message>
        <source>does not fit: %1 × %2 tokens need %3 of the KV cache</source>
        <translation>放不下：%1 × %2 token 需要 KV 缓存的 %3</translation>
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
        <source>Tokens \ sequences</source>
        <translation>token 数 \ 并发数</translation>
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
    <message>
        <source>does not start</source>
        <translation>无法启动</translation>
    </message>
    <message>
        <source>Memory on one GPU</source>
        <translation>单卡显存</translation>
    </message>
    <message>
        <source>Sequences × context: the share of the KV cache they take</source>
        <translation>并发 × 上下文：占 KV 缓存的比例</translation>
    </message>
    <message>
        <source>What would help (each change on its own)</source>
        <translation>怎样能放下更多（每项单独评估）</translation>
    </message>
    <message>
        <source>Generated by BatchFit %1 on %2. The rules and their sources: docs/serving.md.</source>
        <translation>由 BatchFit %1 生成于 %2。规则及其出处见 docs/serving.md。</translation>
    </message>
    <message>
        <source>Serving report</source>
        <translation>推理部署报告</translation>
    </message>
    <message>
        <source>GPU KV cache size: %1 tokens · Maximum concurrency for %2 tokens per request: %3x · at %4 tokens, %5 sequences at once</source>
        <translation>GPU KV 缓存大小：%1 token · 每个请求 %2 token 时的最大并发：%3x · %4 token 时可同时放 %5 条</translation>
    </message>
    <message>
        <source>Host memory (offloaded activations, per GPU)</source>
        <translation>主机内存（卸载的激活，每张 GPU）</translation>
    </message>
    <message>
        <source>Host memory (offloaded activations)</source>
        <translation>主机内存（卸载的激活）</translation>
    </message>
    <message>
        <source>Activation offload (%1): the saved tensors wait in %2 host memory, %3 of it; %4 cross PCIe per step, to the host in the forward and back in the backward.</source>
        <translation>激活卸载（%1）：为反向保存的张量存放在%2主机内存中，共 %3；每步经 PCIe 传输 %4（前向时拷到主机，反向时拷回）。</translation>
    </message>
    <message>
        <source>pageable</source>
        <translation>可分页</translation>
    </message>
    <message>
        <source>pinned</source>
        <translation>锁页</translation>
    </message>
    <message>
        <source>Host memory (offloaded parameter shards, per GPU)</source>
        <translation>主机内存（卸载的参数分片，每张 GPU）</translation>
    </message>
    <message>
        <source>Host memory (offloaded parameters)</source>
        <translation>主机内存（卸载的参数）</translation>
    </message>
    <message>
        <source>Parameter offload: each GPU&apos;s parameter and gradient shards live in host memory (%1), the optimizer steps there; %2 cross PCIe per step.</source>
        <translation>参数卸载：每张 GPU 的参数分片和梯度分片存放在主机内存中（%1），优化器在那里更新；每步经 PCIe 传输 %2。</translation>
    </message>
    <message>
        <source>DPO (TRL&apos;s DPOTrainer): the batch of %1 counts preference pairs, run as %2 sequences; the reference log-probabilities were computed before training.</source>
        <translation>DPO（TRL 的 DPOTrainer）：批大小 %1 按偏好对计数，实际运行 %2 条序列；参考对数概率已在训练前计算。</translation>
    </message>
    <message>
        <source>DPO (TRL&apos;s DPOTrainer): the batch of %1 counts preference pairs, run as %2 sequences; a reference forward without gradients follows the policy&apos;s in every step, on %3.</source>
        <translation>DPO（TRL 的 DPOTrainer）：批大小 %1 按偏好对计数，实际运行 %2 条序列；每一步在策略模型前向之后，于%3上做一次无梯度的参考前向。</translation>
    </message>
    <message>
        <source>a frozen copy of the model (%1 more parameters on the GPU)</source>
        <translation>模型的冻结副本（显存中多出 %1 参数）</translation>
    </message>
    <message>
        <source>the base model, the LoRA adapters disabled</source>
        <translation>关闭 LoRA 适配器的基座模型</translation>
    </message>
    <message>
        <source>colocated vLLM engine %1</source>
        <translation>同进程 vLLM 引擎 %1</translation>
    </message>
    <message>
        <source>transformers&apos; generate() on this GPU</source>
        <translation>在本 GPU 上用 transformers 的 generate()</translation>
    </message>
    <message>
        <source>a colocated vLLM engine, its share counted outside PyTorch</source>
        <translation>同进程 vLLM 引擎，其显存份额计入 PyTorch 之外</translation>
    </message>
    <message>
        <source>a vLLM server on other GPUs</source>
        <translation>其他 GPU 上的 vLLM 服务</translation>
    </message>
    <message>
        <source>no reference model (beta 0)</source>
        <translation>不加载参考模型（beta 0）</translation>
    </message>
    <message>
        <source>the reference&apos;s log-probabilities come from a frozen copy of the model (%1 more parameters on the GPU)</source>
        <translation>参考模型的对数概率来自模型的冻结副本（GPU 上多 %1 参数）</translation>
    </message>
    <message>
        <source>the reference&apos;s log-probabilities come from the base model, the LoRA adapters disabled</source>
        <translation>参考模型的对数概率来自基座模型（禁用 LoRA 适配器）</translation>
    </message>
    <message>
        <source>DoRA r=%1 α=%2 dropout %3, %4</source>
        <translation>DoRA r=%1 α=%2 dropout %3，%4</translation>
    </message>
    <message>
        <source>DoRA as PEFT runs it: each forward rebuilds B·A on an in × in identity and the row norms of the weight plus it, in the adapters&apos; dtype (briefly several weight-sized tensors: the step&apos;s peak can be there), and keeps the base output and the adapter output of every adapted layer.</source>
        <translation>DoRA 按 PEFT 的实现计算：每次前向都在一个 in × in 单位矩阵上重建 B·A，并以适配器的数据类型计算权重加上它之后的行范数（短暂占用若干与权重同大小的张量，训练步的峰值可能就在这里），同时保留每个适配层的基础层输出和适配器输出。</translation>
    </message>
    <message>
        <source>GRPO (TRL&apos;s GRPOTrainer): the batch of %1 counts completions of %2-token prompts; %3 sequences are generated at a time (%4) %6; %5.</source>
        <translation>GRPO（TRL 的 GRPOTrainer）：批大小 %1 按补全（completion）计数，提示为 %2 个 token；%6一次生成 %3 条序列（%4）；%5。</translation>
    </message>
    <message>
        <source>at a micro-batch with gradients held</source>
        <translation>在已持有梯度的微批次</translation>
    </message>
    <message>
        <source>before the first micro-batch</source>
        <translation>在第一个微批次之前</translation>
    </message>
</context>
<context>
    <name>batchfit::SettingLabels</name>
    <message>
        <source>GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>Custom GPU capacity</source>
        <translation>自定义 GPU 容量</translation>
    </message>
    <message>
        <source>Micro-batch</source>
        <translation>微批大小</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>Optimizer implementation</source>
        <translation>优化器实现</translation>
    </message>
    <message>
        <source>AMSGrad</source>
        <translation>AMSGrad</translation>
    </message>
    <message>
        <source>RMSprop momentum</source>
        <translation>RMSprop 动量</translation>
    </message>
    <message>
        <source>RMSprop centered</source>
        <translation>RMSprop centered（中心化）</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>Checkpointing</source>
        <translation>激活检查点</translation>
    </message>
    <message>
        <source>Checkpoint every k blocks</source>
        <translation>每 k 个块设一个检查点</translation>
    </message>
    <message>
        <source>Checkpoint mode</source>
        <translation>检查点模式</translation>
    </message>
    <message>
        <source>Gradient accumulation</source>
        <translation>梯度累积</translation>
    </message>
    <message>
        <source>zero_grad(set_to_none)</source>
        <translation>zero_grad(set_to_none)</translation>
    </message>
    <message>
        <source>Optimizer offload</source>
        <translation>优化器卸载</translation>
    </message>
    <message>
        <source>First step</source>
        <translation>第一步</translation>
    </message>
    <message>
        <source>PyTorch rules</source>
        <translation>PyTorch 规则</translation>
    </message>
    <message>
        <source>Frozen layers</source>
        <translation>冻结的层</translation>
    </message>
    <message>
        <source>Layers that train</source>
        <translation>参与训练的层</translation>
    </message>
    <message>
        <source>LoRA rank</source>
        <translation>LoRA 秩</translation>
    </message>
    <message>
        <source>LoRA alpha</source>
        <translation>LoRA alpha</translation>
    </message>
    <message>
        <source>LoRA dropout</source>
        <translation>LoRA dropout</translation>
    </message>
    <message>
        <source>LoRA targets</source>
        <translation>LoRA 目标层</translation>
    </message>
    <message>
        <source>Quantized base weights</source>
        <translation>量化基座权重</translation>
    </message>
    <message>
        <source>Double quantization</source>
        <translation>双重量化</translation>
    </message>
    <message>
        <source>Compute dtype</source>
        <translation>计算数据类型</translation>
    </message>
    <message>
        <source>prepare_model_for_kbit_training</source>
        <translation>prepare_model_for_kbit_training</translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPU 数量</translation>
    </message>
    <message>
        <source>Tensor parallelism</source>
        <translation>张量并行</translation>
    </message>
    <message>
        <source>Sequence parallelism</source>
        <translation>序列并行</translation>
    </message>
    <message>
        <source>Pipeline stages</source>
        <translation>流水线阶段数</translation>
    </message>
    <message>
        <source>Pipeline micro-batches</source>
        <translation>流水线微批数</translation>
    </message>
    <message>
        <source>Data-parallel strategy</source>
        <translation>数据并行策略</translation>
    </message>
    <message>
        <source>GPUs per node</source>
        <translation>每节点 GPU 数</translation>
    </message>
    <message>
        <source>ZeRO-1 implementation</source>
        <translation>ZeRO-1 实现</translation>
    </message>
    <message>
        <source>DDP bucket size</source>
        <translation>DDP 桶大小</translation>
    </message>
    <message>
        <source>Gradients as bucket views</source>
        <translation>梯度作为桶视图</translation>
    </message>
    <message>
        <source>ZeRO reduce bucket</source>
        <translation>ZeRO reduce 桶</translation>
    </message>
    <message>
        <source>ZeRO overlap_comm</source>
        <translation>ZeRO overlap_comm</translation>
    </message>
    <message>
        <source>ZeRO-3 persistence threshold</source>
        <translation>ZeRO-3 常驻阈值</translation>
    </message>
    <message>
        <source>FSDP all-gather rate limiter</source>
        <translation>FSDP all-gather 限流</translation>
    </message>
    <message>
        <source>FSDP backward prefetch</source>
        <translation>FSDP 反向预取</translation>
    </message>
    <message>
        <source>FSDP2 reshard after forward</source>
        <translation>FSDP2 前向后重新分片</translation>
    </message>
    <message>
        <source>CUDA context</source>
        <translation>CUDA 上下文</translation>
    </message>
    <message>
        <source>cuBLAS workspace</source>
        <translation>cuBLAS 工作区</translation>
    </message>
    <message>
        <source>Fragmentation override</source>
        <translation>碎片比例（手动指定）</translation>
    </message>
    <message>
        <source>PYTORCH_CUDA_ALLOC_CONF</source>
        <translation>分配器设置</translation>
    </message>
    <message>
        <source>Batch lengths replayed</source>
        <translation>回放的批次长度</translation>
    </message>
    <message>
        <source>Samples per epoch</source>
        <translation>每个 epoch 的样本数</translation>
    </message>
    <message>
        <source>Safety margin</source>
        <translation>安全余量</translation>
    </message>
    <message>
        <source>Eager module loading</source>
        <translation>CUDA 模块预先加载（EAGER）</translation>
    </message>
    <message>
        <source>cuDNN workspace cap</source>
        <translation>cuDNN 工作区上限</translation>
    </message>
    <message>
        <source>Serving engine</source>
        <translation>推理引擎</translation>
    </message>
    <message>
        <source>vLLM version</source>
        <translation>vLLM 版本</translation>
    </message>
    <message>
        <source>GPU memory utilization</source>
        <translation>显存利用率（gpu_memory_utilization）</translation>
    </message>
    <message>
        <source>Max model length</source>
        <translation>最大上下文长度（max_model_len）</translation>
    </message>
    <message>
        <source>Max sequences</source>
        <translation>最大并发序列数（max_num_seqs）</translation>
    </message>
    <message>
        <source>Max batched tokens</source>
        <translation>单步最大 token 数（max_num_batched_tokens）</translation>
    </message>
    <message>
        <source>KV block size</source>
        <translation>KV 块大小</translation>
    </message>
    <message>
        <source>KV cache dtype</source>
        <translation>KV 缓存数据类型</translation>
    </message>
    <message>
        <source>Served weights</source>
        <translation>推理权重格式</translation>
    </message>
    <message>
        <source>Quantization group</source>
        <translation>量化分组大小</translation>
    </message>
    <message>
        <source>No CUDA graphs</source>
        <translation>不用 CUDA Graph（enforce_eager）</translation>
    </message>
    <message>
        <source>Activation peak (measured)</source>
        <translation>激活峰值（实测）</translation>
    </message>
    <message>
        <source>Non-torch memory (measured)</source>
        <translation>PyTorch 之外的显存（实测）</translation>
    </message>
    <message>
        <source>CUDA graphs (measured)</source>
        <translation>CUDA Graph 显存（实测）</translation>
    </message>
    <message>
        <source>KV cache memory</source>
        <translation>KV 缓存显存</translation>
    </message>
    <message>
        <source>Language-model loss</source>
        <translation>语言模型损失</translation>
    </message>
    <message>
        <source>Activation offload</source>
        <translation>激活卸载</translation>
    </message>
    <message>
        <source>Parameter offload</source>
        <translation>参数卸载</translation>
    </message>
    <message>
        <source>Recipe</source>
        <translation>训练方式</translation>
    </message>
    <message>
        <source>Reference log-probabilities</source>
        <translation>参考对数概率</translation>
    </message>
    <message>
        <source>Prompt tokens</source>
        <translation>提示 token 数</translation>
    </message>
    <message>
        <source>Generation</source>
        <translation>生成</translation>
    </message>
    <message>
        <source>vLLM share of the GPU</source>
        <translation>vLLM 占用的 GPU 比例</translation>
    </message>
    <message>
        <source>DoRA</source>
        <translation>DoRA</translation>
    </message>
    <message>
        <source>Steps per generation</source>
        <translation>每次生成对应的步数</translation>
    </message>
    <message>
        <source>GRPO iterations</source>
        <translation>GRPO 迭代次数</translation>
    </message>
</context>
</TS>
