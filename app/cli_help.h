#pragma once
// The CLI's --help text; packaging generates the man page from the same text.

namespace batchfit {

inline constexpr const char* kCliHelp = R"(Usage: batchfit-cli COMMAND [OPTIONS]

Estimates the GPU memory of one training step and the largest batch size that fits.

Commands:
  estimate     peak memory at --batch, its components, where the peak happens, top layers
  max-batch    the largest batch (and multiple of 8) that fits --gpu
  sweep        peak memory over a range of batch sizes
  fit-map      for a token-sequence model (--hf-config, an LLM preset): the largest micro-batch that fits
               --gpu at each sequence length of --seq-from..--seq-to, and the tokens per optimizer step
  presets      list the built-in models
  gpus         list the GPU catalogue; with --fit and a model: the largest batch on each GPU (least
               memory first) and the smallest GPU that fits --batch (default 1)
  check        validate a model file (structure, ops, shapes) and summarise it
  report       write a PNG or PDF report (--out FILE.pdf|FILE.png; needs the Qt build)
  allocator-replay TRACE  replay an allocator trace (docs/allocator-trace.md: estimate --trace-out, or
               tools/snapshot_to_trace.py from a torch.cuda.memory snapshot) through the caching-allocator
               model: peak allocated and reserved, segments, the first OOM against --capacity, and how
               they compare with what the snapshot recorded

Model:
  --preset NAME          a built-in model (see `presets`)
  --model FILE           a BatchFit model file (JSON, docs/model-format.md); a file saved with its training
                         set-up (GPU, batch, optimizer, ...) uses it, and the options given override it
  --hf-config FILE|ID    a Hugging Face config.json, or a model id (ORG/NAME) found in the local Hugging Face
                         cache ($HF_HUB_CACHE, $HF_HOME/hub or ~/.cache/huggingface/hub; never downloaded)
                         (gpt2, bert, roberta, llama, mistral, qwen2, qwen3, gemma, gemma2, gemma3_text,
                         phi3 (also phi-4), gpt_neox, and the mixtures of experts mixtral, qwen2_moe,
                         qwen3_moe); with --seq N (default: the config's maximum), --moe-load
                         balanced|worst (tokens per expert: top_k/experts of them, or all on top_k experts) and
                         --attention flash|mem_efficient|eager (default flash: SDPA, what transformers
                         runs on torch 2: the flash kernel on sm_80+ and MI200/MI300 in half precision,
                         else memory-efficient; eager for old transformers, torch 1.13 or output_attentions)
  --onnx FILE            an ONNX model (needs a build with libonnx-dev); the batch is dim 0 of its input;
                         with --onnx-loss cross-entropy|mse|none (default cross-entropy) and
                         --onnx-allow-opaque (unmapped operators become opaque layers)

Training set-up:
  --batch N              micro-batch size (default 1)
  --gpu ID|NGiB          a catalogue GPU (see `gpus`) or a custom capacity, e.g. 24GiB
  --optimizer NAME       sgd, sgd-momentum, sgd-nesterov, adam (default), adamw, rmsprop, adagrad,
                         adafactor, lion, adam8bit, paged-adamw, paged-adamw-8bit (bitsandbytes' paged
                         optimizers: states of tensors >= 1e5 elements in CUDA managed memory, reported
                         apart from the peak)
  --impl NAME            default (what torch picks on a GPU: foreach in 2.x for SGD/Adam/AdamW/RMSprop/
                         Adagrad, for-loop in 1.13), for-loop, foreach, fused
  --amsgrad              Adam/AdamW keep max_exp_avg_sq
  --precision NAME       fp32 (default), amp-fp16, amp-bf16, pure-fp16, pure-bf16, mixed-fp16, mixed-bf16
  --checkpointing MODE   none (default), every-block, every-k, selective
  --checkpoint-every K   k for every-k (default 2)
  --checkpoint-mode M    reentrant (torch.utils.checkpoint's default, and Hugging Face's) or non-reentrant
                         (use_reentrant=False): what the recomputation keeps
  --freeze GLOB[,GLOB]   freeze these layers (requires_grad=False): no gradient, no optimizer state, and
                         ops save only what the remaining gradients need; GLOB matches a layer path
                         (`check` lists them: 'layer1*', 'h[0]*') or a PyTorch module name ('h.0.*'), and
                         a block's path covers what it contains
  --train-only GLOB[,GLOB]  only these layers train (e.g. 'fc' for a frozen backbone); with --freeze too,
                         a layer trains when it is listed here and not frozen there; with LoRA: the layers
                         that train besides the adapters (PEFT's modules_to_save)
  --lora-rank R          LoRA fine-tuning (PEFT): adapters of rank R on the target linears, the rest frozen
  --lora-alpha A         lora_alpha (default 8; the adapter output is scaled by A/R)
  --lora-dropout P       lora_dropout (default 0); each adapted linear has its own dropout
  --lora-targets NAMES|all-linear  target_modules: names a linear's path ends with (q_proj,v_proj), or every
                         linear but the output head; default: PEFT's for the model's family (q_proj,v_proj for
                         Llama/Mistral/Qwen, c_attn for GPT-2, query,value for BERT)
  --quant nf4|fp4|int8   QLoRA-style base weights (bitsandbytes via transformers' BitsAndBytesConfig): every
                         linear but the output head and tied weights stores 4-bit codes + an fp32 absmax per
                         64 (0.5625 B/param), or int8 + a scale per row; the matmul dequantizes its weight
                         on the fly; implies PEFT's prepare_model_for_kbit_training (the other weights in
                         fp32, checkpointing every block unless --checkpointing says otherwise)
  --double-quant         bnb_4bit_use_double_quant: 8-bit absmax (0.5159 B/param)
  --compute-dtype D      bnb_4bit_compute_dtype fp32 (default), bf16, fp16: used for fp16 inputs (bitsandbytes
                         computes fp32 and bf16 inputs in their own dtype)
  --no-kbit-prepare      quantize without prepare_model_for_kbit_training
  --accumulation N       micro-batches per optimizer step (default 1)
  --gpus N               data parallelism over N GPUs (default 1); the batch is the micro-batch per GPU and
                         every figure is one GPU's (the most loaded rank)
  --strategy S           ddp, zero1, zero2, zero3 (DeepSpeed ZeRO stages), fsdp (FULL_SHARD), fsdp-grad-op
                         (SHARD_GRAD_OP), hsdp (HYBRID_SHARD: shards within a node), fsdp2 (fully_shard)
  --gpus-per-node G      GPUs per node (default 8): HSDP's shard group
  --tp T                 Megatron tensor parallelism over T of the GPUs (heads, MLP columns and the vocab
                         split; norms, dropout and the residual stream whole): data-parallel size GPUs / T
  --sequence-parallel    with --tp T > 1: Megatron sequence parallelism, the norms, dropouts and residual
                         stream split over the T GPUs along the sequence (s/T tokens each); a column-parallel
                         linear all-gathers its input into one kept buffer and saves only its shard
  --pp P                 pipeline parallelism, 1F1B: the first stage (the embedding and ceil(L/P) layers,
                         min(M, P) micro-batches in flight) and the last (floor(L/P) layers, the head and
                         the loss, 1 in flight) are simulated and the heavier is shown; --microbatches M
                         (default P); data-parallel size GPUs / (T x P)
  --zero-impl deepspeed|torch  zero1 by DeepSpeed (flat partitions) or torch's ZeroRedundancyOptimizer over
                         DDP (whole tensors, greedy by size)
  --bucket-cap-mb M      DDP bucket_cap_mb (default 25); --gradient-as-bucket-view: gradients are views into
                         the buckets (without it, the buckets are one more gradient-sized buffer)
  --reduce-bucket-size E DeepSpeed reduce_bucket_size in elements (default 5e8); --overlap-comm on|off
                         (DeepSpeed's default: on for stage 3 only); --stage3-param-persistence-threshold E
                         (default 1e5: smaller parameters stay whole on every GPU)
  --no-limit-all-gathers FSDP without the rate limiter; --backward-prefetch pre|post (default pre);
                         --no-reshard-after-forward (FSDP2: keep gathered parameters to the backward)
  --alloc-conf TEXT      PYTORCH_CUDA_ALLOC_CONF for the caching-allocator replay that gives reserved memory
                         and the verdict, e.g. expandable_segments:True or max_split_size_mb:128
  --replay-seqs L,L,...  variable-length batches: the sequence lengths of the steps replayed before the one
                         estimated (the first is the first step, then steady steps; the model's own length,
                         the longest, comes last), e.g. 256,1024,512: the cache they leave fragments
  --epoch-samples N      training samples per epoch (len(dataset)): the epoch's last, smaller batch
                         (DataLoader drop_last=False; per GPU ceil(N / data-parallel GPUs)) is replayed
                         before the step estimated, as the next epoch's first batch meets its cache
  --fragmentation F      override the replay: reserved = peak x (1 + F), rounded to 2 MiB
  --margin F             safety margin, a fraction of capacity (0.05) or a percentage (5%)
  --context-mib N        CUDA context size in MiB (default: the GPU's)
  --cublas-workspace-kib N  cuBLAS workspace per handle in KiB (default: the GPU's; 0 as with
                         CUBLAS_WORKSPACE_CONFIG=:0:0, or to compare with a CPU measurement)
  --no-set-to-none       zero_grad(set_to_none=False): gradients stay allocated
  --offload              optimizer states and master weights in host memory
  --first-step           simulate step 1 (optimizer states created in step()) instead of the steady state
  --torch 2|1.13         whose autograd formulas decide what is saved (default 2: PyTorch 2.x; 1.13 kept more,
                         e.g. the input of a mean over dims or a global average pool)

Output:
  --json                 machine-readable output (docs/estimate-fields.md)
  --top N                layers shown by activation memory (default 10)
  --timeline             include the step timeline (estimate --json)
  --from N --to N        sweep range (default 1..1024)
  --step N --log         sweep step; with --log, multiply by N (default: powers of 2)
  --seq-from N --seq-to N  fit-map sequence lengths (default: 128 up to the model's maximum positions, or 4x
                         its length); --hf-config models are imported again at each length
  --seq-step N           fit-map: add N (default: double, at most 64 lengths, up to 16777216)
  --trace-out FILE       estimate: write the step's allocations and frees as an allocator trace
  --capacity SIZE        allocator-replay: the GPU's memory (24GiB, 512MiB or bytes; default: the trace's
                         device_total_bytes); --context-mib N is taken off it
  --memory-fraction F    allocator-replay: torch.cuda.set_per_process_memory_fraction(F) (what makes
                         garbage_collection_threshold act)
  --out FILE             report output file
  --measured FILE        estimate, report: measured points from tools/torch_measure.py, shown next to
                         the estimate (text, --json "measured", crosses on the report's chart)
  --lang en|zh_CN        report language
  --version              print the version
  --help                 print this help

Exit codes:
  0  success (estimate/check with --gpu: it fits)
  1  it does not fit the GPU (estimate with --gpu; max-batch when not even batch 1 fits; fit-map when
     batch 1 fits at none of the lengths)
  2  usage error (unknown command or option, bad value)
  3  bad input: the model file or preset cannot be loaded, validated or estimated
  4  the report could not be written
)";

} // namespace batchfit
