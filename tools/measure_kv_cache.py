#!/usr/bin/env python3
"""What Hugging Face generate()'s KV cache holds, measured on the CPU, against BatchFit's serving model.

    /work/venv/bin/python tools/measure_kv_cache.py measure    # needs torch + transformers (scripts/measure-venv.sh)
    python3 tools/measure_kv_cache.py check build/app/batchfit-cli   # ctest: standard library only

`measure` builds each model of CASES from its real config.json (tests/data/hf, tests/data/serving/configs) with
the widths that do not change the cache made small (hidden size, MLP, vocabulary) and the ones that do kept
(layers, KV heads, head_dim, sliding windows, MLA ranks), writes that config to tests/data/serving/hf-generate/,
runs generate() with DynamicCache and StaticCache, and records the bytes the cache's tensors hold at the end.
`check` asks `batchfit-cli serve --engine hf|hf-static --json` for the same configs and lengths: the bytes must
be equal, byte for byte.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "serving", "hf-generate")
RESULTS = os.path.join(OUT, "measured.json")

# (name, source config, overrides keeping the cache's shape, batch, prompt, new tokens)
CASES = [
    ("llama-3-8b-gqa", "tests/data/hf/llama-3-8b.json", {"head_dim": 128}, 2, 24, 9),
    ("qwen3-8b", "tests/data/hf/qwen3-8b.json", {}, 2, 24, 9),
    ("mistral-7b-sliding", "tests/data/hf/mistral-7b.json", {"head_dim": 128, "sliding_window": 16}, 1, 30, 8),
    ("gemma-2-2b-alternating", "tests/data/hf/gemma-2-2b.json", {"sliding_window": 16}, 2, 20, 12),
    ("gemma-3-1b-5to1", "tests/data/hf/gemma-3-1b-it.json", {"sliding_window": 16}, 1, 40, 6),
    ("qwen2-0.5b-tied", "tests/data/hf/qwen2-0.5b.json", {"head_dim": 64}, 3, 16, 5),
    ("deepseek-v2-lite-mla", "tests/data/serving/configs/deepseek-v2-lite.json", {"n_routed_experts": 8}, 2, 12, 4),
]
SMALL = {"hidden_size": 64, "intermediate_size": 128, "vocab_size": 512, "moe_intermediate_size": 32}


def make_config(src, overrides):
    cfg = json.load(open(os.path.join(ROOT, src)))
    for k, v in SMALL.items():
        if k in cfg:
            cfg[k] = v
    cfg.update(overrides)
    cfg["torch_dtype"] = "bfloat16"
    cfg["max_position_embeddings"] = min(cfg.get("max_position_embeddings", 4096), 4096)
    return cfg


def measure():
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM

    os.makedirs(OUT, exist_ok=True)
    results = {"torch": torch.__version__, "transformers": transformers.__version__, "cases": []}
    for name, src, overrides, batch, prompt, new in CASES:
        cfg_json = make_config(src, overrides)
        path = os.path.join(OUT, name + ".json")
        with open(path, "w") as f:
            json.dump(cfg_json, f, indent=1)
        config = AutoConfig.from_pretrained(path)
        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16).eval()
        ids = torch.randint(3, 500, (batch, prompt))
        row = {"name": name, "config": os.path.relpath(path, ROOT), "batch": batch, "prompt": prompt, "new": new}
        for impl in ("dynamic", "static"):
            kw = {} if impl == "dynamic" else {"cache_implementation": "static"}
            with torch.no_grad():
                out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=new, min_new_tokens=new,
                                     do_sample=False, return_dict_in_generate=True, pad_token_id=0, **kw)
            cache = out.past_key_values
            total, lengths = 0, []
            for layer in cache.layers:
                for t in (layer.keys, layer.values):
                    total += t.numel() * t.element_size()
                lengths.append(int(layer.keys.shape[-2]))
            row[impl] = {"bytes": total, "lengths": lengths}
            if impl == "static":
                row["static_max_cache_len"] = prompt + new
        results["cases"].append(row)
        print(name, row["dynamic"]["bytes"], row["static"]["bytes"], row["dynamic"]["lengths"][:8])
    with open(RESULTS, "w") as f:
        json.dump(results, f, indent=1)
        f.write("\n")


def batchfit_bytes(cli, case, engine):
    # After generate() of `new` tokens the cache holds prompt + new - 1 positions (the last token is not fed
    # back); StaticCache is made that long too (transformers 5.24: max_cache_len = max_length - 1).
    length = case["prompt"] + case["new"] - 1
    args = [cli, "serve", "--hf-config", os.path.join(ROOT, case["config"]), "--engine", engine, "--gpu", "80GiB",
            "--batch", str(case["batch"]), "--seq", str(length), "--json"]
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    if p.returncode not in (0, 1):
        raise SystemExit(f"{case['name']}: {p.stderr.strip()}")
    return json.loads(p.stdout)["answer"]["kv_cache_bytes"]


def check(cli):
    data = json.load(open(RESULTS))
    failures = 0
    for case in data["cases"]:
        for engine, key in (("hf", "dynamic"), ("hf-static", "static")):
            bf, measured = batchfit_bytes(cli, case, engine), case[key]["bytes"]
            ok = bf == measured
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {case['name']:26s} {engine:10s} measured {measured:>12,} "
                  f"BatchFit {bf:>12,}")
    print(f"{failures} failures (torch {data['torch']}, transformers {data['transformers']})")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "measure":
        measure()
    elif len(sys.argv) == 3 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2]))
    else:
        raise SystemExit(__doc__)
