#!/usr/bin/env python3
"""The config route against real Hugging Face transformers (issue 28): docs/accuracy-real.md.

    python3 tools/accuracy_real.py measure [--only NAME,NAME+lora,NAME+dora,lm-loss,...] [--out tests/data/real/accuracy-real.json]
                                           [--trl-chunked-wheel trl-1.14.2-py3-none-any.whl]
    python3 tools/accuracy_real.py check BATCHFIT_CLI [--data ...] [--doc docs/accuracy-real.md] [--write-doc]

measure (the measurement virtual environment, scripts/measure-venv.sh: the newest torch and transformers): for
every family, the fixture config.json of tests/data/hf, cut to two layers (and, for the mixtures of experts,
narrower experts so that the model fits this machine's memory), is built by transformers itself
(`AutoConfig.for_model`, the architecture class the config names), in fp32 and in bf16, with eager and with SDPA
attention, and one training forward with labels runs on the CPU. It records:

* parameters: `sum(p.numel() for p in model.parameters())`;
* saved bytes: the unique storages autograd saves during forward and loss (saved_tensors_hooks,
  tools/saved_lib.py), parameters excluded, the input ids included.

Two CPU/CUDA differences are taken out so that the CPU measures what the GPU runs:

* dropout: torch's CPU `F.dropout` saves a float noise tensor, CUDA's fused kernel (`native_dropout`) a bool
  mask. The measurement runs `F.dropout` as `torch.native_dropout`, which is what CUDA runs (Dropout.cpp,
  `is_fused_kernel_acceptable`).
* SDPA with attention dropout: CUDA's flash and memory-efficient kernels take the dropout, the CPU falls back to
  the math path. SDPA rows set the config's attention dropout to 0 (in both the measurement and the estimate).

check (any python3, no torch): estimates each row again with `batchfit-cli estimate --hf-config` (the row's
config, --seq, --batch, --precision fp32|pure-bf16, --attention eager|flash) and fails when the parameters differ
or the saved bytes are off by more than 1%. --write-doc rewrites the table in docs/accuracy-real.md.
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_check  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HF = os.path.join(ROOT, "tests", "data", "hf")
DATA = os.path.join(ROOT, "tests", "data", "real", "accuracy-real.json")
DOC = os.path.join(ROOT, "docs", "accuracy-real.md")
BEGIN, END = "<!-- BEGIN accuracy_real.py -->", "<!-- END accuracy_real.py -->"
SAVED_BOUND = 0.01
HEAP_BOUND = 0.10
BATCH, SEQ = 2, 256

LAYERS = ("num_hidden_layers", "n_layer")
ATTENTION_DROPOUT = ("attn_pdrop", "attention_dropout", "attention_probs_dropout_prob")

# name, fixture in tests/data/hf, overrides besides two layers
FAMILIES = [
    ("gpt2", "gpt2.json", {}),
    ("bert", "bert-base-uncased.json", {}),
    ("llama-3.2", "llama-3.2-3b.json", {}),
    ("qwen3", "qwen3-0.6b.json", {}),
    ("qwen2", "qwen2-0.5b.json", {}),
    ("mistral", "mistral-7b.json", {}),
    ("gemma", "gemma-2b.json", {}),
    ("gemma2", "gemma-2-2b.json", {}),
    ("gemma3", "gemma-3-1b-it.json", {}),
    ("phi3", "phi-3-mini-4k.json", {}),
    ("gpt-neox", "pythia-160m.json", {}),
    ("mixtral", "mixtral-8x7b.json", {"intermediate_size": 2048}),
    ("qwen3-moe", "qwen3-30b-a3b.json", {"num_experts": 32}),
    # DeepSeek-V3 narrowed to fit this machine (AdamW steps on the CPU): its own attention widths (q_lora_rank 1536,
    # kv_lora_rank 512, heads of 128 + 64 and 128), one dense layer and one of 32 experts in 8 groups
    ("deepseek-v3", "deepseek-v3.json", {"hidden_size": 2048, "num_attention_heads": 16, "num_key_value_heads": 16,
                                         "intermediate_size": 4096, "moe_intermediate_size": 512,
                                         "n_routed_experts": 32, "first_k_dense_replace": 1, "vocab_size": 32768}),
    ("vit", "vit-base-patch16-224.json", {}),
    # DeepSeek-V2-Lite with 16 of its 64 experts and a 32,768-token vocabulary (its widths otherwise; greedy routing)
    ("deepseek-v2", "deepseek-v2-lite.json", {"n_routed_experts": 16, "vocab_size": 32768}),
]

# PEFT's own get_peft_model on the same models (SDPA): name, fixture, overrides, LoraConfig fields
LORA = [
    ("gpt2", "gpt2.json", {}, {"r": 8, "target_modules": ["c_attn"]}),
    ("llama-3.2", "llama-3.2-3b.json", {}, {"r": 16, "target_modules": ["q_proj", "v_proj"]}),
    ("qwen3", "qwen3-0.6b.json", {}, {"r": 8, "target_modules": "all-linear", "lora_dropout": 0.05}),
    ("mistral", "mistral-7b.json", {}, {"r": 32, "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj",
                                                                     "gate_proj", "up_proj", "down_proj"]}),
    ("deepseek-v3", "deepseek-v3.json", FAMILIES[-3][2], {"r": 16, "target_modules": [
        "q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"]}),
    # DoRA (use_dora=True, peft/tuners/lora/dora.py): without dropout (the base layer's output reused), with the
    # biased q/k/v of Qwen2, with dropout (a second base matmul on the dropped input, in the adapters' dtype), and
    # on GPT-2's Conv1D (fan_in_fan_out)
    ("llama-3.2", "llama-3.2-3b.json", {}, {"r": 16, "target_modules": ["q_proj", "v_proj"], "use_dora": True}),
    ("qwen2", "qwen2-0.5b.json", {}, {"r": 8, "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"],
                                      "use_dora": True}),
    ("qwen3", "qwen3-0.6b.json", {}, {"r": 8, "target_modules": "all-linear", "lora_dropout": 0.05,
                                      "use_dora": True}),
    ("gpt2", "gpt2.json", {}, {"r": 8, "target_modules": ["c_attn"], "use_dora": True}),
    # rsLoRA (use_rslora=True): scaling alpha / sqrt(r) instead of alpha / r, a Python float either way: nothing
    # changes in memory, which this row checks
    ("qwen3", "qwen3-0.6b.json", {}, {"r": 16, "target_modules": ["q_proj", "v_proj"], "use_rslora": True},
     "/rslora"),
    # with a 1,024-token vocabulary the logits no longer make the peak: DoRA's own tensors do (eye(in) and the
    # weight-sized products of its norm in the forward; down_proj's eye(8192) is 256 MiB in fp32)
    ("qwen3", "qwen3-0.6b.json", {"vocab_size": 1024}, {"r": 8, "target_modules": "all-linear",
                                                        "lora_dropout": 0.05, "use_dora": True}, "/vocab1024"),
    ("llama-3.2", "llama-3.2-3b.json", {"vocab_size": 1024}, {"r": 16, "target_modules": "all-linear",
                                                              "use_dora": True}, "/vocab1024"),
]

# QLoRA as users load it (bitsandbytes 0.50 quantizes on the CPU): the model saved, then from_pretrained with
# BitsAndBytesConfig in bf16, PEFT's prepare_model_for_kbit_training (fp32 other weights; checkpointing or not)
# and LoRA: name, fixture, overrides, BitsAndBytesConfig fields, LoRA fields, gradient checkpointing. 4-bit only:
# in training, bitsandbytes runs 8-bit layers on the CPU through MatMul8bitFp (autograd/_functions.py matmul(),
# "no fast kernel for quant/dequant 8bit in CPU/XPU"), not the MatMul8bitLt that CUDA runs, so the CPU cannot
# measure int8's rule; 4-bit layers that need a gradient run MatMul4Bit on both.
QLORA_CFG = ("qwen3", "qwen3-0.6b.json", {})
NF4 = {"load_in_4bit": True, "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": True,
       "bnb_4bit_compute_dtype": "bfloat16"}
QLORA = [QLORA_CFG + (quant, {"r": 16, "target_modules": ["q_proj", "v_proj"]}, ckpt)
         for quant in (NF4,) for ckpt in (False, True)]

# TRL's own language-model losses (docs/memory-model.md, "The language-model loss"), on Qwen3 cut to two layers
# with a 40,960-token vocabulary (two of the fused head's 32,768-wide vocabulary tiles) at batch 2 x 2,049 tokens
# (N = 4,096 predicted tokens: one full token tile): name, fixture, overrides, --lm-loss, batch, seq, LoRA fields
LM_CFG = ("qwen3", "qwen3-0.6b.json", {"vocab_size": 40960})
LM_LOSS = [LM_CFG + (loss, 2, 2049, lora) for loss in ("full", "trl-fused", "trl-chunked")
           for lora in (None, {"r": 16, "target_modules": ["q_proj", "v_proj"]})]
# TRL's fused head with a vocabulary narrower than its 32,768-wide tile buffer, which it allocates whole
# (`--only lm-loss-tile`)
LM_LOSS_TILE = [("qwen3", "qwen3-0.6b.json", {"vocab_size": 4096}, "trl-fused", 2, 2049, None)]


def row_config(fixture, overrides, attention):
    with open(os.path.join(HF, fixture)) as f:
        cfg = json.load(f)
    for k in LAYERS:
        if k in cfg:
            cfg[k] = 2
    cfg.update(overrides)
    if attention == "sdpa":
        for k in ATTENTION_DROPOUT:
            if k in cfg:
                cfg[k] = 0.0
    return cfg


def build(cfg, attention, dtype):
    import torch
    import transformers
    fields = dict(cfg)
    config = transformers.AutoConfig.for_model(fields.pop("model_type"), **fields)
    arch = (cfg.get("architectures") or [""])[0]
    cls = getattr(transformers, arch, None)
    if cls is None or not any(arch.endswith(s) for s in ("ForCausalLM", "ForMaskedLM", "ForImageClassification")):
        cls = transformers.AutoModelForCausalLM
    torch.manual_seed(0)
    make = cls.from_config if cls is transformers.AutoModelForCausalLM else cls._from_config
    model = make(config, attn_implementation=attention, dtype=dtype)
    return model.train(), config


def measure_one(name, fixture, overrides, dtype_name, attention, lora=None, tag=""):
    import torch
    from saved_lib import SavedRecorder
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype_name]
    cfg = row_config(fixture, overrides, attention)
    model, config = build(cfg, attention, dtype)
    key = f"{name}/{dtype_name}/{attention}"
    if lora:
        import peft
        model = peft.get_peft_model(model, peft.LoraConfig(**lora))
        targets = lora["target_modules"]
        key += f"/lora-r{lora['r']}-{targets if isinstance(targets, str) else ','.join(targets)}"
        key += ("/dora" if lora.get("use_dora") else "") + tag
    seq = SEQ
    if cfg["model_type"] == "vit":  # an image batch and its classes
        seq, side = None, cfg.get("image_size", 224)
        inputs = {"pixel_values": torch.randn(BATCH, cfg.get("num_channels", 3), side, side, dtype=dtype),
                  "labels": torch.randint(config.num_labels, (BATCH,))}
    else:
        ids = torch.randint(config.vocab_size, (BATCH, SEQ))
        inputs = {"input_ids": ids, "labels": ids}
    with SavedRecorder(exclude_tensors=list(model.parameters())) as rec:
        out = model(**inputs)
    rec.attribute(out.loss)
    by_node = {}
    for r in rec.records:
        if r["new"]:
            slot = f"{r['node']}.{r['slot']} {r['dtype']}"
            by_node[slot] = by_node.get(slot, 0) + r["storage_bytes"]
    saved = rec.total
    unreachable = rec.unreachable_bytes()
    # SDPA's kernel on the CPU: the flash kernel, or the math fallback where it does not apply (DeepSeek's q, k
    # and v head sizes differ); the estimate is asked for the same one
    kernel = None
    if attention == "sdpa" and not any(k.startswith("ScaledDotProduct") for k in by_node):
        kernel = "math"
    # the unpack hook each saved tensor keeps refers to the recorder, which holds the tensors: a cycle through
    # C++ that the garbage collector cannot see; break it, or every model measured stays in memory
    rec.tensors.clear()
    del out
    peak = peak_op = None
    if attention == "sdpa":
        peak, peak_op = step_heap_peak(model, inputs)
    return {"key": key, "model": name, "fixture": fixture, "config": cfg, "lora": lora,
            "dtype": dtype_name, "attention": attention, "batch": BATCH, "seq": seq,
            "parameters": sum(p.numel() for p in model.parameters()),
            "trainable": sum(p.numel() for p in model.parameters() if p.requires_grad), "saved_bytes": saved,
            "heap_peak": peak, "heap_peak_op": peak_op,
            "saved_by_node": dict(sorted(by_node.items(), key=lambda kv: -kv[1]))} | (
                {"sdpa_kernel": kernel} if kernel else {}) | (
                {"saved_unreachable": unreachable} if unreachable else {})


def logical_numel(p):
    """A parameter's element count as the model defines it: a packed 4-bit weight's quant_state knows its shape."""
    qs = getattr(p, "quant_state", None)
    return qs.shape.numel() if qs is not None and hasattr(qs, "shape") else p.numel()


def measure_qlora(name, fixture, overrides, quant, lora, ckpt):
    """One step of a bitsandbytes-quantized model with PEFT LoRA, loaded as transformers loads it."""
    import shutil
    import torch
    import transformers
    import peft
    from saved_lib import SavedRecorder
    cfg = row_config(fixture, overrides, "sdpa")
    model, config = build(cfg, "sdpa", torch.bfloat16)
    folder = tempfile.mkdtemp()
    try:
        model.save_pretrained(folder)
        del model
        q = dict(quant)
        if "bnb_4bit_compute_dtype" in q:
            q["bnb_4bit_compute_dtype"] = getattr(torch, q["bnb_4bit_compute_dtype"])
        model = transformers.AutoModelForCausalLM.from_pretrained(
            folder, quantization_config=transformers.BitsAndBytesConfig(**q), device_map="cpu",
            dtype=torch.bfloat16, attn_implementation="sdpa")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    model = peft.prepare_model_for_kbit_training(model, use_gradient_checkpointing=ckpt)
    model = peft.get_peft_model(model, peft.LoraConfig(**lora))
    model.train()
    kind = "int8" if quant.get("load_in_8bit") else quant["bnb_4bit_quant_type"] + (
        "-dq" if quant.get("bnb_4bit_use_double_quant") else "")
    key = f"{name}/bf16/sdpa/qlora-{kind}/lora-r{lora['r']}-{','.join(lora['target_modules'])}" + (
        "/checkpointing" if ckpt else "")
    ids = torch.randint(config.vocab_size, (BATCH, SEQ))
    inputs = {"input_ids": ids, "labels": ids}
    with SavedRecorder(exclude_tensors=list(model.parameters())) as rec:
        out = model(**inputs)
    rec.tensors.clear()
    del out
    peak, peak_op = step_heap_peak(model, inputs)
    return {"key": key, "model": name, "fixture": fixture, "config": cfg, "lora": lora, "quant": quant,
            "checkpointing": ckpt, "dtype": "bf16", "attention": "sdpa", "batch": BATCH, "seq": SEQ,
            "parameters": sum(logical_numel(p) for p in model.parameters()),
            "trainable": sum(p.numel() for p in model.parameters() if p.requires_grad), "saved_bytes": rec.total,
            "heap_peak": peak, "heap_peak_op": peak_op,
            "bitsandbytes": __import__("bitsandbytes").__version__}


def trl_cuda_kernels():
    """TRL's fused head as it runs on CUDA. There a Triton kernel folds each [4096, 32768] logits tile into the
    running statistics, and in the backward turns it into its gradient, in place (kernels/chunked_logprob.py
    _forward_kernel, _backward_kernel); the fp32 accumulation is one addmm with out_dtype=float32 (_addmm_fp32,
    torch >= 2.8). None of them allocates. On the CPU, TRL runs torch fallbacks (_forward_tile, _backward_tile,
    addmm_ of .float() copies) that allocate several fp32 tiles. The measurement replaces those three by
    allocation-free stand-ins: what it counts is everything TRL allocates around the kernels (the tile buffer,
    the statistics, the fp32 gradient buffers, the copies). The loss's value is then meaningless; its memory is
    not."""
    from trl.kernels import chunked_logprob as k

    def no_allocation(*args, **kwargs):
        return None
    k._forward_tile = k._backward_tile = k._addmm_fp32 = no_allocation


def trl_chunked_loss(path):
    """TRL 1.14's chunked_nll (the SFT default from 1.9 to 1.14), from that release's wheel at `path`: its
    _chunk, _chunked_cross_entropy_loss and _patch_chunked_ce_lm_head, run as they are (the newest TRL has only
    the fused head)."""
    import ast
    import dataclasses
    import inspect
    import types
    import zipfile
    import torch
    import torch.nn.functional as F
    import transformers
    from transformers.modeling_outputs import BaseModelOutputWithPast, CausalLMOutputWithPast
    from trl.trainer.utils import maybe_gather_lm_head_ctx
    from packaging.version import Version
    with zipfile.ZipFile(path) as z:
        src = z.read("trl/trainer/sft_trainer.py").decode()
    wanted = {"_CHUNKED_LM_HEAD_CHUNK_SIZE", "_ChunkedCELMHeadOutput", "_chunk", "_chunked_cross_entropy_loss",
              "_patch_chunked_ce_lm_head"}
    tree = ast.parse(src)
    body = [n for n in tree.body if getattr(n, "name", None) in wanted or (
        isinstance(n, ast.Assign) and any(getattr(t, "id", None) in wanted for t in n.targets))]
    ns = {"torch": torch, "F": F, "transformers": transformers, "dataclass": dataclasses.dataclass,
          "CausalLMOutputWithPast": CausalLMOutputWithPast, "BaseModelOutputWithPast": BaseModelOutputWithPast,
          "maybe_gather_lm_head_ctx": maybe_gather_lm_head_ctx, "Version": Version, "types": types,
          "inspect": inspect, "load_balancing_loss_func": None}  # MoE only: not these rows
    exec(compile(ast.Module(body=body, type_ignores=[]), path + ":trl/trainer/sft_trainer.py", "exec"), ns)
    return ns["_patch_chunked_ce_lm_head"], ns["_CHUNKED_LM_HEAD_CHUNK_SIZE"]


def measure_lm_loss(name, fixture, overrides, lm_loss, batch, seq, lora, dtype_name, trl_wheel):
    """One training step of the model with TRL's loss patched in, as SFTTrainer does it."""
    import torch
    from saved_lib import SavedRecorder
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype_name]
    cfg = row_config(fixture, overrides, "sdpa")
    model, config = build(cfg, "sdpa", dtype)
    kwargs, chunk = {}, None
    if lm_loss == "trl-fused":  # SFTTrainer: add_fused_lm_head before PEFT wraps the model
        from trl.trainer.utils import add_fused_lm_head
        add_fused_lm_head(model)
        kwargs["fused_lm_head"] = True
    elif lm_loss == "trl-chunked":  # SFTTrainer 1.14: the base model's forward is patched
        patch, chunk = trl_chunked_loss(trl_wheel)
        patch(model, chunk)
    key = f"{name}/{dtype_name}/sdpa/{lm_loss}"
    if cfg["vocab_size"] != LM_CFG[2]["vocab_size"]:
        key += f"/vocab{cfg['vocab_size']}"
    if lora:
        import peft
        model = peft.get_peft_model(model, peft.LoraConfig(**lora))
        key += f"/lora-r{lora['r']}-{','.join(lora['target_modules'])}"
    ids = torch.randint(config.vocab_size, (batch, seq))
    inputs = dict({"input_ids": ids, "labels": ids}, **kwargs)
    with SavedRecorder(exclude_tensors=list(model.parameters())) as rec:
        out = model(**inputs)
    saved = rec.total
    rec.tensors.clear()
    del out
    peak, peak_op = step_heap_peak(model, inputs)
    return {"key": key, "model": name, "fixture": fixture, "config": cfg, "lora": lora, "lm_loss": lm_loss,
            "loss_chunk": chunk, "dtype": dtype_name, "attention": "sdpa", "batch": batch, "seq": seq,
            "parameters": sum(p.numel() for p in model.parameters()),
            "trainable": sum(p.numel() for p in model.parameters() if p.requires_grad), "saved_bytes": saved,
            "heap_peak": peak, "heap_peak_op": peak_op}


def step_heap_peak(model, inputs):
    """A Trainer-like step, `model(**inputs).loss.backward()` (the outputs, logits included, are dropped before
    the backward, as Trainer.compute_loss returns only the loss), AdamW (foreach) and zero_grad: the CPU heap
    peak of the third step over what lives across steps (accuracy_torch2.heap_peak)."""
    import torch
    from accuracy_torch2 import heap_peak
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4, foreach=True)

    def step():
        model(**inputs).loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    step()  # the first step creates the optimizer states; the measured one is steady-state
    step()
    return heap_peak(step)


def cuda_dropout():
    """F.dropout as CUDA's fused kernel runs it: native_dropout, a bool mask saved for backward."""
    import torch
    import torch.nn.functional as F

    def dropout(x, p=0.5, training=True, inplace=False):
        if not training or p == 0:
            return x
        return torch.native_dropout(x, p, True)[0]
    F.dropout = dropout


def trl_versions(args):
    try:
        import trl
    except ImportError:
        return None
    chunked = os.path.basename(args.trl_chunked_wheel) if args.trl_chunked_wheel else "not measured"
    return f"{trl.__version__} (trl-fused rows); trl-chunked rows: {chunked}"


def group_of(row):
    """--only's name for a row: the family, FAMILY+lora, or lm-loss."""
    if "lm_loss" in row:
        return "lm-loss-tile" if "/vocab" in row["key"] else "lm-loss"
    if "quant" in row:
        return "qlora"
    if row.get("lora"):
        return row["model"] + ("+dora" if row["lora"].get("use_dora") else "+lora")
    return row["model"]


def cmd_measure(args):
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import torch
    import transformers
    cuda_dropout()
    only = set(args.only.split(",")) if args.only else None
    rows, trl_note = [], trl_versions(args)
    if os.path.exists(args.out) and only:
        with open(args.out) as f:
            before = json.load(f)
        rows = [r for r in before["rows"] if group_of(r) not in only]
        if "lm-loss" not in only:  # the TRL rows kept are the ones measured before
            trl_note = before.get("trl", trl_note)
    order = [f[0] for f in FAMILIES]
    losses = ["full", "trl-fused", "trl-chunked"]

    def save(row):  # after every row: a long run that stops keeps what it measured
        rows.append(row)
        rows.sort(key=lambda r: ("lm_loss" in r, "quant" in r, losses.index(r.get("lm_loss", "full")), bool(r.get("lora")),
                                 order.index(r["model"]), r["dtype"] != "fp32", r["attention"] != "eager"))
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        with open(args.out + ".tmp", "w") as f:
            json.dump({"torch": torch.__version__, "transformers": transformers.__version__, "trl": trl_note,
                       "rows": rows}, f, indent=1)
            f.write("\n")
        os.replace(args.out + ".tmp", args.out)
        print(f"{row['key']:28s} params {row['parameters']:>12,d} trainable {row['trainable']:>12,d} "
              f"saved {row['saved_bytes']:>14,d}", flush=True)

    for name, fixture, overrides in FAMILIES:
        if not only or name in only:
            for dtype in ("fp32", "bf16"):
                for attention in ("eager", "sdpa"):
                    try:
                        save(measure_one(name, fixture, overrides, dtype, attention))
                    except ValueError as e:  # Gemma 2: "does not support ... scaled_dot_product_attention"
                        if attention != "sdpa" or "scaled_dot_product_attention" not in str(e):
                            raise
                        print(f"{name}/{dtype}/sdpa: transformers has no SDPA for it (eager is its default)")
    for name, fixture, overrides, lora, *tag in LORA:
        if not only or name + ("+dora" if lora.get("use_dora") else "+lora") in only:
            for dtype in ("fp32", "bf16"):
                save(measure_one(name, fixture, overrides, dtype, "sdpa", lora, *tag))
    if not only or "qlora" in only:
        for name, fixture, overrides, quant, lora, ckpt in QLORA:
            save(measure_qlora(name, fixture, overrides, quant, lora, ckpt))
    if not only or "lm-loss" in only:
        trl_cuda_kernels()
        for name, fixture, overrides, lm_loss, batch, seq, lora in LM_LOSS:
            if lm_loss == "trl-chunked" and not args.trl_chunked_wheel:
                print("trl-chunked rows skipped: give --trl-chunked-wheel (trl-1.14.2-py3-none-any.whl)")
                continue
            for dtype in ("fp32", "bf16"):
                save(measure_lm_loss(name, fixture, overrides, lm_loss, batch, seq, lora, dtype,
                                     args.trl_chunked_wheel))
    if not only or "lm-loss-tile" in only:
        trl_cuda_kernels()
        for name, fixture, overrides, lm_loss, batch, seq, lora in LM_LOSS_TILE:
            for dtype in ("fp32", "bf16"):
                save(measure_lm_loss(name, fixture, overrides, lm_loss, batch, seq, lora, dtype, None))


def estimate(cli, row, tmp):
    cmd = [cli, "estimate", "--hf-config", measure_check.config_file(tmp, row), "--batch", str(row["batch"]),
           "--precision", "pure-bf16" if row["dtype"] == "bf16" else "fp32", "--optimizer", "adamw", "--impl",
           "foreach", "--cublas-workspace-kib", "0",
           "--attention", "eager" if row["attention"] == "eager" else row.get("sdpa_kernel", "flash"), "--json"]
    if row["seq"]:
        cmd += ["--seq", str(row["seq"])]
    if row.get("lm_loss"):
        cmd += ["--lm-loss", row["lm_loss"]]
    if row.get("quant"):  # loaded in bf16 (quant_state.dtype), the other weights fp32 after the preparation
        q = row["quant"]
        cmd += ["--quant", "int8"] if q.get("load_in_8bit") else [
            "--quant", q["bnb_4bit_quant_type"], "--compute-dtype", q["bnb_4bit_compute_dtype"]] + (
            ["--double-quant"] if q.get("bnb_4bit_use_double_quant") else [])
        # --quant implies the preparation's checkpointing (reentrant, every block): say so only when it is off
        cmd += [] if row["checkpointing"] else ["--checkpointing", "none"]
    if row.get("lora"):
        lora, targets = row["lora"], row["lora"]["target_modules"]
        cmd += ["--lora-rank", str(lora["r"]), "--lora-dropout", str(lora.get("lora_dropout", 0.0)),
                "--lora-targets", targets if isinstance(targets, str) else ",".join(targets)]
        cmd += ["--lora-dora"] if lora.get("use_dora") else []
    e = measure_check.run_json(cmd)
    t = e["totals"]
    return {"parameters": t["parameter_count"], "trainable": t["trainable_parameter_count"],
            "saved_bytes": t["saved_activation_bytes"], "heap_peak": measure_check.heap_peak(e),
            "peak_op": e["peak_op"]}


def held(row):
    """The saved bytes the loss's graph holds for the backward: those packed by a graph dropped inside the
    forward (DoRA's lora_weight, SavedRecorder.unreachable_bytes) are freed before it."""
    return row["saved_bytes"] - row.get("saved_unreachable", 0)


def problems_of(row, e):
    out = []
    for k in ("parameters", "trainable"):
        if e[k] != row[k]:
            out.append(f"{k}: estimated {e[k]:,d}, measured {row[k]:,d}")
    e["saved_error"] = (e["saved_bytes"] - held(row)) / held(row)
    # trl-chunked: torch.utils.checkpoint holds the chunks' inputs (the packed hidden states, the sorted labels)
    # in its frames, which saved_tensors_hooks do not see; BatchFit counts them as saved. Its step peak is checked.
    if abs(e["saved_error"]) > SAVED_BOUND and row.get("lm_loss") != "trl-chunked":
        out.append(f"saved: estimated {e['saved_bytes']:,d}, measured {held(row):,d} "
                   f"({100 * e['saved_error']:+.2f}%)")
    e["heap_error"] = None
    if row.get("heap_peak"):
        e["heap_error"] = (e["heap_peak"] - row["heap_peak"]) / row["heap_peak"]
        if abs(e["heap_error"]) > HEAP_BOUND:
            out.append(f"heap peak: estimated {e['heap_peak']:,d}, measured {row['heap_peak']:,d} "
                       f"({100 * e['heap_error']:+.2f}%)")
    return out


def table(rows, ests):
    lines = ["| model | fixture | weights | attention | PEFT LoRA | parameters | trainable | saved MiB measured | "
             "estimated | error | step peak MiB measured | estimated | error |",
             "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r, e in zip(rows, ests):
        marks = {k: "" if e[k] == r[k] else f" (estimated {e[k]:,d})" for k in ("parameters", "trainable")}
        lora = r.get("lora")
        peft = "–" if not lora else (f"r={lora['r']} `{lora['target_modules']}`" if isinstance(
            lora["target_modules"], str) else f"r={lora['r']} {','.join(lora['target_modules'])}") + (
            f", dropout {lora['lora_dropout']}" if lora and lora.get("lora_dropout") else "") + (
            ", DoRA" if lora and lora.get("use_dora") else "")
        model = r["model"] + (f" ({r['lm_loss']} loss, batch {r['batch']} x {r['seq']})" if r.get("lm_loss")
                              else "")
        if r.get("quant"):
            q = r["quant"]
            model += f" (QLoRA {q['bnb_4bit_quant_type'].upper()}" + (
                " double-quant" if q.get("bnb_4bit_use_double_quant") else "") + (
                ", checkpointing" if r["checkpointing"] else "") + ")"
        lines.append(f"| {model} | `{r['fixture']}` | {r['dtype']} | {r['attention']} | {peft} | "
                     f"{r['parameters']:,d}{marks['parameters']} | {r['trainable']:,d}{marks['trainable']} | "
                     f"{held(r) / 2**20:,.2f} | "
                     f"{e['saved_bytes'] / 2**20:,.2f} | {100 * e['saved_error']:+.2f}% | "
                     + (f"{r['heap_peak'] / 2**20:,.1f} | {e['heap_peak'] / 2**20:,.1f} | {100 * e['heap_error']:+.1f}% |"
                        if r.get("heap_peak") else "– | – | – |"))
    return "\n".join(lines)


def cmd_check(args):
    with open(args.data) as f:
        data = json.load(f)
    rows, ests, failures = data["rows"], [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for row in rows:
            e = estimate(args.cli, row, tmp)
            problems = problems_of(row, e)
            ests.append(e)
            failures += bool(problems)
            heap = f" step peak {100 * e['heap_error']:+.1f}%" if e["heap_error"] is not None else ""
            print(f"{'FAIL' if problems else 'ok  '} {row['key']:28s} saved {100 * e['saved_error']:+.2f}%{heap}"
                  + "".join(f"\n     {p}" for p in problems))
    if args.write_doc:
        versions = f"Measured under torch {data['torch']}, transformers {data['transformers']}" + (
            f", TRL {data['trl']}" if data.get("trl") else "") + ".\n\n"
        measure_check.splice(args.doc, BEGIN, END, versions + table(rows, ests))
    print(f"{len(rows) - failures}/{len(rows)} rows within the bounds")
    return 1 if failures else 0


def main():
    return measure_check.main(__doc__, DATA, DOC, cmd_measure, cmd_check,
                              measure_args=[("--only", {}), ("--trl-chunked-wheel",
                                                            {"help": "TRL 1.14.2's wheel, for the trl-chunked rows"})])


if __name__ == "__main__":
    sys.exit(main())
