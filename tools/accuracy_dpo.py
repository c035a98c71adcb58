#!/usr/bin/env python3
"""DPO as TRL's DPOTrainer runs it, against `--recipe dpo` (issue 29 §5): docs/accuracy-llm.md.

    python3 tools/accuracy_dpo.py measure [--out tests/data/real/accuracy-dpo.json]
    python3 tools/accuracy_dpo.py check BATCHFIT_CLI [--data ...] [--doc docs/accuracy-llm.md] [--write-doc]

measure (the measurement virtual environment, scripts/measure-venv.sh: TRL, PEFT, transformers, torch): Qwen3
(tests/data/hf/qwen3-0.6b.json cut to two layers, a 40,960-token vocabulary) is built by transformers and handed
to TRL's own DPOTrainer with a preference data set of BATCH pairs per step: a one-word prompt and completions
that make every sequence SEQ tokens (EOS included), so that each of the 2 x BATCH sequences predicts SEQ - 1
tokens (4,096 in all: one full token tile of TRL's fused head). A word-level tokenizer is built in place (the
Hub is not reached). Rows: fp32 and bf16 weights; PEFT LoRA r=16 on q_proj,v_proj (the reference is the base
model with the adapter disabled) or full training (the reference a frozen copy of the model); reference
log-probabilities live (every step) or precomputed (precompute_ref_log_probs=True); gradient checkpointing off,
and on as TRL defaults it (Trainer.train's activation_checkpointing_enable, non-reentrant; TRL then makes the
PEFT model's inputs require grad; the estimate adds --checkpointing every-block --checkpoint-mode
non-reentrant; its saved bytes are not compared, the checkpoint's hooks hiding the layers'). TRL's fused head runs
allocation-free stand-ins of its CUDA kernels (tools/accuracy_real.py trl_cuda_kernels) and dropout its CUDA
form. Counted:

* parameters and trainable parameters of the policy;
* saved bytes: what autograd saves during DPOTrainer.compute_loss (the policy's forward; the reference's runs
  under no_grad), parameters excluded;
* the step's heap peak: compute_loss, backward, AdamW (foreach) and zero_grad, the third step, over what lives
  across steps (parameters, the reference copy, optimizer states).

check (any python3): `batchfit-cli estimate --hf-config <config> --recipe dpo --ref-logps live|precomputed --batch
BATCH --seq SEQ ...` and fails when a count differs, the saved bytes are off by more than 1% or the peak by more
than 10%.
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_check  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "real", "accuracy-dpo.json")
DOC = os.path.join(ROOT, "docs", "accuracy-llm.md")
BEGIN, END = "<!-- BEGIN accuracy_dpo.py -->", "<!-- END accuracy_dpo.py -->"
SAVED_BOUND, HEAP_BOUND = 0.01, 0.10
BATCH, SEQ = 2, 1025
FIXTURE, OVERRIDES = "qwen3-0.6b.json", {"vocab_size": 40960}
LORA = {"r": 16, "target_modules": ["q_proj", "v_proj"]}
# (weights, LoRA, reference log-probs, gradient checkpointing): without checkpointing, and TRL's default (on;
# transformers 5's non-reentrant torch.utils.checkpoint per decoder layer, and PEFT's inputs made to require grad)
ROWS = [(dtype, lora, ref, False) for dtype in ("fp32", "bf16") for lora in (LORA, None)
        for ref in ("live", "precomputed")] + [(dtype, lora, "live", True) for dtype in ("fp32", "bf16")
                                               for lora in (LORA, None)]


def tokenizer(words):
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers
    vocab = {f"w{i}": i for i in range(words)}
    vocab.update({"<pad>": words, "<eos>": words + 1})
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>")


def measure_row(dtype_name, lora, ref, ckpt):
    import copy
    import datasets
    import peft
    import torch
    import trl
    import accuracy_real as ar
    from accuracy_torch2 import heap_peak
    from saved_lib import SavedRecorder
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype_name]
    cfg = ar.row_config(FIXTURE, OVERRIDES, "sdpa")
    model, config = ar.build(cfg, "sdpa", dtype)
    ar.trl_cuda_kernels()
    words = 4000
    completion = SEQ - 2  # the one-word prompt and EOS

    def text(n, start):
        return " ".join(f"w{(start + i) % words}" for i in range(n))
    data = datasets.Dataset.from_dict({"prompt": [text(1, k) for k in range(4 * BATCH)],
                                       "chosen": [" " + text(completion, 7 * k) for k in range(4 * BATCH)],
                                       "rejected": [" " + text(completion, 11 * k + 3) for k in range(4 * BATCH)]})
    live = ref == "live"
    args = trl.DPOConfig(output_dir=tempfile.mkdtemp(), per_device_train_batch_size=BATCH, max_length=None,
                         use_cpu=True, report_to=[], precompute_ref_log_probs=not live, save_strategy="no",
                         gradient_checkpointing=ckpt)
    ref_model = copy.deepcopy(model).eval() if lora is None and live else None
    trainer = trl.DPOTrainer(model=model, ref_model=ref_model, args=args, train_dataset=data,
                             processing_class=tokenizer(words), peft_config=peft.LoraConfig(**lora) if lora else None)
    if ckpt:  # what Trainer.train does first (activation_checkpointing_kwargs None: use_reentrant=False)
        trainer.model.activation_checkpointing_enable(activation_checkpointing_kwargs=None)
    batch = next(iter(trainer.get_train_dataloader()))
    assert tuple(batch["input_ids"].shape) == (2 * BATCH, SEQ), batch["input_ids"].shape
    m = trainer.model
    with SavedRecorder(exclude_tensors=list(m.parameters())) as rec:
        loss = trainer.compute_loss(m, batch)
    saved = rec.total
    rec.tensors.clear()
    del loss
    opt = torch.optim.AdamW([p for p in m.parameters() if p.requires_grad], lr=1e-6, foreach=True)

    def step():
        trainer.compute_loss(m, batch).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    step()
    step()
    peak, peak_op = heap_peak(step)
    key = f"qwen3/{dtype_name}/{'lora-r16' if lora else 'full'}/ref-{ref}" + ("/checkpointing" if ckpt else "")
    return {"key": key, "config": cfg, "dtype": dtype_name, "lora": lora, "ref_logps": ref, "checkpointing": ckpt,
            "batch": BATCH,
            "seq": SEQ, "parameters": sum(p.numel() for p in m.parameters()),
            "trainable": sum(p.numel() for p in m.parameters() if p.requires_grad), "saved_bytes": saved,
            "heap_peak": peak, "heap_peak_op": peak_op}


def cmd_measure(args):
    import torch
    import transformers
    import trl
    import accuracy_real as ar
    ar.cuda_dropout()
    rows = []
    for dtype, lora, ref, ckpt in ROWS:
        rows.append(measure_row(dtype, lora, ref, ckpt))
        print(f"{rows[-1]['key']:32s} saved {rows[-1]['saved_bytes']:>12,d} peak {rows[-1]['heap_peak']:>12,d}",
              flush=True)
        with open(args.out + ".tmp", "w") as f:
            json.dump({"torch": torch.__version__, "transformers": transformers.__version__,
                       "trl": trl.__version__, "rows": rows}, f, indent=1)
            f.write("\n")
        os.replace(args.out + ".tmp", args.out)


def estimate(cli, row, tmp):
    return measure_check.trl_estimate(cli, row, tmp, ["--recipe", "dpo", "--ref-logps", row["ref_logps"]])[1]


def cmd_check(args):
    with open(args.data) as f:
        data = json.load(f)
    lines = [f"Measured under torch {data['torch']}, transformers {data['transformers']}, TRL {data['trl']}.", "",
             "| weights | training | reference log-probs | checkpointing | parameters | trainable | saved MiB measured | estimated | "
             "error | step peak MiB measured | estimated | error | reference copy MiB |",
             "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for r in data["rows"]:
            e = estimate(args.cli, r, tmp)
            # under non-reentrant checkpointing the checkpoint's own hooks pack what the layers save; the
            # recorder sees only what lies outside them: the step's peak is the check there
            se, he, bad = measure_check.compare(r, e, SAVED_BOUND, HEAP_BOUND, not r["checkpointing"])
            failures += bool(bad)
            print(f"{'FAIL' if bad else 'ok  '} {r['key']:32s} saved {100 * se:+.2f}% step peak {100 * he:+.1f}% "
                  f"(at {e['peak_op']})" + "".join(f"\n     {b}" for b in bad))
            lines.append(f"| {r['dtype']} | {'LoRA r=16 q_proj,v_proj' if r['lora'] else 'full'} | {r['ref_logps']} | "
                         f"{'every layer' if r['checkpointing'] else 'off'} | "
                         f"{r['parameters']:,d} | {r['trainable']:,d} | {r['saved_bytes'] / 2**20:,.2f} | "
                         f"{e['saved_bytes'] / 2**20:,.2f} | {100 * se:+.2f}% | {r['heap_peak'] / 2**20:,.1f} | "
                         f"{e['heap_peak'] / 2**20:,.1f} | {100 * he:+.1f}% | {e['reference'] / 2**20:,.1f} |")
    if args.write_doc:
        measure_check.splice(args.doc, BEGIN, END, "\n".join(lines))
    print(f"{len(data['rows']) - failures}/{len(data['rows'])} rows within the bounds")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(measure_check.main(__doc__, DATA, DOC, cmd_measure, cmd_check))
