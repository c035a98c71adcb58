"""The batchfit Python package against batchfit-cli: the same JSON for the same set-up, the same messages and
exit codes, every option of the CLI under its name, the local Hugging Face cache, save/open, and an nn.Module
exported in process (when torch is importable). Run by tests/python/run_tests.sh in a fresh virtual environment:

    BATCHFIT_CLI=build/app/batchfit-cli BATCHFIT_SOURCE=. PYTHONPATH=build/python python3 -m unittest test_package
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import batchfit
from batchfit._native import native
from batchfit.api import option_arguments

CLI = os.environ["BATCHFIT_CLI"]
SOURCE = os.environ["BATCHFIT_SOURCE"]
DATA = os.path.join(SOURCE, "tests", "data")


def cli_json(*args):
    p = subprocess.run([CLI, *args, "--json"], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise AssertionError(f"batchfit-cli {args}: {p.returncode} {p.stderr}")
    return json.loads(p.stdout)


def presets():
    return [p["id"] for p in cli_json("presets")]


class SameAnswerAsTheCli(unittest.TestCase):
    def test_estimate_equals_the_cli_json_for_every_preset(self):
        for preset in presets():
            with self.subTest(preset=preset):
                r = batchfit.estimate(preset, batch_size=4, gpu="rtx-4090", precision="amp-bf16")
                self.assertEqual(r.json, cli_json("estimate", "--preset", preset, "--batch", "4", "--gpu", "rtx-4090",
                                                  "--precision", "amp-bf16"))
                self.assertEqual(r.fits, r.json["verdict"]["fits"])
                self.assertEqual(r.max_batch, r.json["max_batch"]["largest"])

    def test_max_batch_equals_the_cli_and_is_the_edge_of_fits(self):
        for preset in ("resnet50", "gpt2-small"):
            with self.subTest(preset=preset):
                m = batchfit.max_batch(preset, gpu="a100-40gb", optimizer="adamw")
                self.assertEqual(m.json, cli_json("max-batch", "--preset", preset, "--gpu", "a100-40gb",
                                                  "--optimizer", "adamw"))
                self.assertTrue(batchfit.check_fit(preset, batch_size=m.largest, gpu="a100-40gb", optimizer="adamw"))
                self.assertFalse(batchfit.check_fit(preset, batch_size=m.largest + 1, gpu="a100-40gb",
                                                    optimizer="adamw"))

    def test_lora_quant_and_sharding_options(self):
        r = batchfit.estimate("llama-2-7b", batch_size=2, gpu=24, quant="nf4", double_quant=True,
                              lora={"rank": 16, "alpha": 32, "targets": ["q_proj", "v_proj"]})
        self.assertEqual(r.json, cli_json("estimate", "--preset", "llama-2-7b", "--batch", "2", "--gpu", "24GiB",
                                          "--quant", "nf4", "--double-quant", "--lora-rank", "16", "--lora-alpha",
                                          "32", "--lora-targets", "q_proj,v_proj"))
        self.assertLess(r.json["totals"]["trainable_parameter_count"], 10**8)
        z = batchfit.estimate("llama-2-7b", batch_size=1, gpu="h100-80gb", gpus=8, strategy="zero3", margin=0.1)
        self.assertEqual(z.json, cli_json("estimate", "--preset", "llama-2-7b", "--batch", "1", "--gpu", "h100-80gb",
                                          "--gpus", "8", "--strategy", "zero3", "--margin", "0.1"))

    def test_python_m_batchfit_is_the_cli(self):
        for args, rc in ((["check-fit", "--preset", "resnet50", "--gpu", "rtx-4090", "--batch", "64"], 0),
                         (["check-fit", "--preset", "resnet50", "--gpu", "rtx-4090", "--batch", "4096"], 1),
                         (["check-fit", "--preset", "resnet50", "--batch", "4"], 2),
                         (["estimate", "--model", os.path.join(DATA, "no-such.json")], 3)):
            with self.subTest(args=args):
                ours = subprocess.run([sys.executable, "-m", "batchfit", *args], capture_output=True, text=True)
                theirs = subprocess.run([CLI, *args], capture_output=True, text=True)
                self.assertEqual((ours.returncode, ours.stdout, ours.stderr),
                                 (theirs.returncode, theirs.stdout, theirs.stderr))
                self.assertEqual(ours.returncode, rc)


class CopyAsPython(unittest.TestCase):
    """The desktop app's Edit > Copy as Python: the call runs the set-up the command line runs."""

    def test_the_call_gives_the_command_lines_answer(self):
        lines = [["estimate", "--preset", "resnet50", "--batch", "64", "--gpu", "rtx-4090"],
                 ["estimate", "--preset", "llama-2-7b", "--batch", "2", "--gpu", "24GiB", "--quant", "nf4",
                  "--double-quant", "--lora-rank", "16", "--lora-targets", "q_proj,v_proj", "--margin", "0.1"],
                 ["estimate", "--preset", "gpt2-small", "--batch", "3", "--gpu", "a100-40gb", "--no-set-to-none",
                  "--checkpointing", "every-k", "--checkpoint-every", "3", "--torch", "1.13"]]
        for args in lines:
            with self.subTest(args=args):
                code = native().python_estimate_call(args)
                self.assertTrue(code.startswith("import batchfit\nbatchfit.estimate("), code)
                scope = {}
                exec(code.replace("batchfit.estimate(", "r = batchfit.estimate(", 1), scope)
                self.assertEqual(scope["r"].json, cli_json(*args))


class EveryOption(unittest.TestCase):
    def test_every_setting_of_the_table_has_its_keyword(self):
        settings = native().settings()
        self.assertGreater(len(settings), 40)
        for s in settings:
            if not s["flag"]:
                continue
            name = s["flag"][2:].replace("-", "_")
            value = True if s["form"] != "value" else (s["default"] or "1")
            with self.subTest(flag=s["flag"]):
                args = option_arguments({name: value})
                self.assertEqual(args[0], "--batch" if name == "batch_size" else s["flag"])

    def test_cli_messages_become_exceptions(self):
        with self.assertRaises(batchfit.UsageError) as e:
            batchfit.estimate("resnet50", optimizer="adamx")
        self.assertIn("unknown optimizer 'adamx'", str(e.exception))
        self.assertEqual(e.exception.exit_code, 2)
        with self.assertRaises(batchfit.UsageError) as e:
            batchfit.estimate("resnet50", no_such_option=3)
        self.assertIn("--no-such-option", str(e.exception))
        with self.assertRaises(batchfit.UsageError) as e:
            batchfit.estimate("resnet50", batch_size=2**40)
        self.assertIn("--batch", str(e.exception))

    def test_a_hostile_model_file_names_the_file_the_layer_and_the_attribute(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.json")
            with open(bad, "w") as f:
                json.dump({"format": "batchfit-model", "version": 1, "name": "x", "input": {"shape": [3]},
                           "layers": [{"name": "a", "op": "linear", "in_features": -5, "out_features": 10**15}]}, f)
            with self.assertRaises(batchfit.InputError) as e:
                batchfit.estimate(bad, gpu="rtx-4090")
            theirs = subprocess.run([CLI, "estimate", "--model", bad, "--gpu", "rtx-4090"], capture_output=True,
                                    text=True)
            self.assertEqual(str(e.exception), theirs.stderr.strip().replace("batchfit-cli: ", ""))
            self.assertIn("bad.json", str(e.exception))
            self.assertIn("out_features", str(e.exception))


class Models(unittest.TestCase):
    def test_from_pretrained_config_reads_the_local_cache_and_never_downloads(self):
        with tempfile.TemporaryDirectory() as hub:
            snap = os.path.join(hub, "models--acme--tiny-llama", "snapshots", "abc123")
            os.makedirs(snap)
            with open(os.path.join(DATA, "hf", "llama-3.2-3b.json")) as f:
                config = f.read()
            with open(os.path.join(snap, "config.json"), "w") as f:
                f.write(config)
            os.makedirs(os.path.join(hub, "models--acme--tiny-llama", "refs"))
            with open(os.path.join(hub, "models--acme--tiny-llama", "refs", "main"), "w") as f:
                f.write("abc123")
            old = os.environ.get("HF_HUB_CACHE")
            os.environ["HF_HUB_CACHE"] = hub
            try:
                source = batchfit.from_pretrained_config("acme/tiny-llama", seq=512)
                r = batchfit.estimate(source, batch_size=1, gpu="a100-80gb")
                self.assertEqual(r.json, cli_json("estimate", "--hf-config", os.path.join(snap, "config.json"),
                                                  "--seq", "512", "--batch", "1", "--gpu", "a100-80gb"))
                with self.assertRaises(ValueError) as e:
                    batchfit.from_pretrained_config("acme/not-downloaded")
                self.assertIn("acme/not-downloaded", str(e.exception))
            finally:
                if old is None:
                    del os.environ["HF_HUB_CACHE"]
                else:
                    os.environ["HF_HUB_CACHE"] = old

    def test_the_gpu_torch_names_is_found_in_the_catalogue(self):
        from batchfit.models import catalogue_gpu
        gib = 1 << 30
        cases = {("NVIDIA A100-SXM4-40GB", 42298834944): "a100-40gb",
                 ("NVIDIA A100-SXM4-80GB", 85097971712): "a100-80gb",
                 ("NVIDIA H100 80GB HBM3", 85029158912): "h100-80gb",
                 ("NVIDIA GeForce RTX 4090", 25393692672): "rtx-4090",
                 ("NVIDIA GeForce RTX 4090 D", 25393692672): "rtx-4090-d",
                 ("Tesla T4", 15835660288): "t4",
                 ("NVIDIA L40S", 47697362944): "l40s",
                 ("NVIDIA GeForce RTX 4090", 48 * gib): None,  # a modded 48 GB card: its own capacity
                 ("Some Future GPU", 64 * gib): None}
        for (name, memory), expected in cases.items():
            with self.subTest(name=name, memory=memory):
                self.assertEqual(catalogue_gpu(name, memory), expected)

    def test_a_dict_config_and_a_model_file_path(self):
        with open(os.path.join(DATA, "hf", "qwen3-0.6b.json")) as f:
            config = json.load(f)
        a = batchfit.estimate(config, batch_size=2, gpu="rtx-4090", seq=256)
        b = batchfit.estimate(os.path.join(DATA, "hf", "qwen3-0.6b.json"), batch_size=2, gpu="rtx-4090", seq=256)
        self.assertEqual(a.required_bytes, b.required_bytes)
        self.assertEqual(a.json["totals"], b.json["totals"])

    def test_save_writes_the_setup_the_gui_and_cli_open(self):
        r = batchfit.estimate("gpt2-small", batch_size=6, gpu="a100-40gb", optimizer="adamw",
                              checkpointing="every-block")
        with tempfile.TemporaryDirectory() as tmp:
            path = r.save(os.path.join(tmp, "setup.json"))
            again = cli_json("estimate", "--model", path)  # GPU, batch and settings from the file
            self.assertEqual(again["batch"], 6)
            self.assertEqual(again["gpu"]["id"], "a100-40gb")
            self.assertEqual(again["required_bytes"], r.required_bytes)
            self.assertEqual(again["config"], r.json["config"])

    @unittest.skipUnless(os.environ.get("BATCHFIT_GUI_EXE"), "the desktop app is not built")
    def test_open_gui_starts_the_app_with_the_setup(self):
        r = batchfit.estimate("gpt2-small", batch_size=6, gpu="a100-40gb", optimizer="adamw")
        with tempfile.TemporaryDirectory() as tmp:
            shot = os.path.join(tmp, "gui.png")
            wrapper = os.path.join(tmp, "batchfit")  # the app, told to save its window once the estimate shows
            with open(wrapper, "w") as f:
                f.write(f'#!/bin/sh\nexec "{os.environ["BATCHFIT_GUI_EXE"]}" "$@" --screenshot "{shot}"\n')
            os.chmod(wrapper, 0o755)
            # a new user's settings (nothing restored, no dialog from an earlier session), no display needed
            env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=tmp, XDG_DATA_HOME=tmp,
                       XDG_CACHE_HOME=tmp)
            old = os.environ.copy()
            os.environ.update(env)
            try:
                proc = r.open_gui(executable=wrapper)
                try:
                    self.assertEqual(proc.wait(timeout=180), 0)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                    raise
            finally:
                os.environ.clear()
                os.environ.update(old)
            self.assertGreater(os.path.getsize(shot), 10000)

    def test_notebook_display(self):
        r = batchfit.estimate("resnet50", batch_size=512, gpu="rtx-4090")
        page = r._repr_html_()
        self.assertIn("<svg", page)
        self.assertIn(r.verdict["decision"], page)
        self.assertIn(f"largest batch {r.max_batch}", page)
        self.assertIn("out of memory", repr(r))


@unittest.skipUnless(__import__("importlib").util.find_spec("torch"), "torch is not installed")
class TrlLoss(unittest.TestCase):
    def test_the_loss_sfttrainer_runs_is_read_from_its_config(self):
        import types
        import warnings
        from batchfit.integrations.training_setup import lm_loss_option
        sft = types.SimpleNamespace
        self.assertIsNone(lm_loss_option(sft(), "pure-bf16", "1.16.0"))  # a plain Trainer: the full logits
        self.assertEqual(lm_loss_option(sft(loss_type="nll"), "pure-bf16", "1.16.0"), "trl-fused")
        self.assertEqual(lm_loss_option(sft(loss_type="chunked_nll"), "fp32", "1.15.0"), "trl-fused")
        self.assertEqual(lm_loss_option(sft(loss_type="chunked_nll"), "pure-bf16", "1.14.2"), "trl-chunked")
        self.assertIsNone(lm_loss_option(sft(loss_type="nll"), "pure-bf16", "1.14.2"))
        self.assertIsNone(lm_loss_option(sft(loss_type="dft"), "pure-bf16", "1.16.0"))
        self.assertEqual(lm_loss_option(sft(loss_type="nll", use_liger_kernel=True), "pure-bf16", "1.16.0"), "liger")
        self.assertEqual(lm_loss_option(sft(use_liger_kernel=True), "fp32", "1.16.0"), "liger")  # plain Trainer
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.assertIsNone(lm_loss_option(sft(loss_type="nll", use_liger_kernel=True), "amp-bf16", "1.16.0"))
            self.assertIsNone(lm_loss_option(sft(loss_type="nll"), "amp-bf16", "1.16.0"))
        self.assertEqual(len(caught), 2)
        self.assertIn("Liger", str(caught[0].message))
        self.assertIn("autocast", str(caught[1].message))

    def test_the_keyword_reaches_the_estimate(self):
        llama = os.path.join(DATA, "hf", "llama-3.2-3b.json")
        full = batchfit.estimate(llama, seq=4096, batch_size=1, precision="pure-bf16", lora_rank=16)
        fused = batchfit.estimate(llama, seq=4096, batch_size=1, precision="pure-bf16", lora_rank=16,
                                  lm_loss="trl-fused")
        self.assertLess(fused.peak_allocated_bytes, full.peak_allocated_bytes)
        self.assertEqual(fused.json["config"]["lm_loss"], "trl-fused")


class ActivationOffload(unittest.TestCase):
    def test_transformers_offload_key_becomes_the_setting(self):
        import types
        from batchfit.integrations.training_setup import checkpointing_options
        args = types.SimpleNamespace(activation_checkpointing=True,
                                     activation_checkpointing_kwargs={"offload": True, "every_n_layers": 2})
        self.assertEqual(checkpointing_options(args, 5),
                         {"checkpointing": "every-k", "checkpoint_mode": "non-reentrant", "checkpoint_every": 2,
                          "activation_offload": "checkpoints"})
        args.activation_checkpointing_kwargs = {}
        self.assertNotIn("activation_offload", checkpointing_options(args, 5))

    def test_deepspeed_and_fsdp_arguments_become_the_strategy_and_its_offloads(self):
        import types
        from batchfit.integrations.training_setup import sharding_options
        args = types.SimpleNamespace
        zero3 = {"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"},
                                       "offload_optimizer": {"device": "cpu"}}}
        self.assertEqual(sharding_options(args(deepspeed=zero3)), {"strategy": "zero3", "offload_params": True})
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "ds.json")
            with open(path, "w") as f:
                json.dump({"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}, f)
            self.assertEqual(sharding_options(args(deepspeed=path)), {"strategy": "zero2", "offload": True})
        self.assertEqual(sharding_options(args(fsdp="full_shard auto_wrap offload", fsdp_config={})),
                         {"strategy": "fsdp2", "offload_params": True})
        self.assertEqual(sharding_options(args(fsdp="full_shard auto_wrap", fsdp_config={"version": 1})),
                         {"strategy": "fsdp"})
        self.assertEqual(sharding_options(args(fsdp="", deepspeed=None)), {})

    def test_dpo_config_is_the_dpo_recipe(self):
        import types
        from batchfit.integrations.training_setup import trainer_options
        model = types.SimpleNamespace(parameters=lambda: [])
        args = types.SimpleNamespace(per_device_train_batch_size=2, optim="adamw_torch", beta=0.1,
                                     precompute_ref_log_probs=False, loss_type=["sigmoid"])
        opts = trainer_options(args, model)
        self.assertEqual((opts["recipe"], opts["ref_logps"]), ("dpo", "live"))
        self.assertNotIn("lm_loss", opts)  # DPO's loss_type is not SFT's; the recipe implies TRL's fused head
        args.precompute_ref_log_probs = True
        self.assertEqual(trainer_options(args, model)["ref_logps"], "precomputed")
        self.assertNotIn("recipe", trainer_options(types.SimpleNamespace(per_device_train_batch_size=2,
                                                                         optim="adamw_torch"), model))

    def test_grpo_config_is_the_grpo_recipe(self):
        import types
        import warnings
        from batchfit.integrations.training_setup import trainer_options
        model = types.SimpleNamespace(parameters=lambda: [])
        args = types.SimpleNamespace(per_device_train_batch_size=4, optim="adamw_torch", beta=0.0,
                                     num_generations=8, max_completion_length=512, use_vllm=False,
                                     loss_type="dapo", gradient_accumulation_steps=2, steps_per_generation=None)
        opts = trainer_options(args, model)
        self.assertEqual((opts["recipe"], opts["ref_logps"], opts["_completion"]), ("grpo", "none", 512))
        self.assertNotIn("generation", opts)  # transformers' generate(), the default
        self.assertNotIn("lm_loss", opts)  # GRPO's loss_type is not SFT's
        args.beta, args.use_vllm, args.vllm_mode, args.vllm_gpu_memory_utilization = 0.04, True, "colocate", 0.4
        opts = trainer_options(args, model)
        self.assertEqual((opts["ref_logps"], opts["generation"], opts["vllm_memory"]), ("live", "vllm-colocate", 0.4))
        args.vllm_mode = "server"
        self.assertEqual(trainer_options(args, model)["generation"], "vllm-server")
        self.assertNotIn("steps_per_generation", trainer_options(args, model))  # None: the accumulation
        args.steps_per_generation, args.num_iterations = 4, 2
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            opts = trainer_options(args, model)
        self.assertEqual((opts["steps_per_generation"], opts["num_iterations"]), (4, 2))
        self.assertFalse(any("steps_per_generation" in str(w.message) for w in caught))

    def test_grpo_estimate_takes_the_prompt_and_the_completion(self):
        config = os.path.join(DATA, "hf", "qwen3-0.6b.json")
        r = batchfit.estimate(config, batch_size=2, seq=1024, recipe="grpo", prompt_len=256, gpu="a100-80gb",
                              generation="vllm-colocate", vllm_memory=0.25)
        self.assertEqual(r.json, cli_json("estimate", "--hf-config", config, "--batch", "2", "--seq", "1024",
                                          "--recipe", "grpo", "--prompt-len", "256", "--gpu", "a100-80gb",
                                          "--generation", "vllm-colocate", "--vllm-memory", "0.25"))
        self.assertEqual(r.json["overheads"]["non_pytorch"]["vllm_bytes"], 80 * 2**30 // 4)

    def test_trl_activation_offloading_is_said_not_modelled(self):
        import types
        import warnings
        from batchfit.integrations.training_setup import trainer_options
        args = types.SimpleNamespace(per_device_train_batch_size=2, activation_offloading=True, optim="adamw_torch")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            opts = trainer_options(args, types.SimpleNamespace(parameters=lambda: []))
        self.assertNotIn("activation_offload", opts)
        self.assertTrue(any("activation_offloading" in str(w.message) for w in caught))

    def test_the_keyword_moves_the_checkpoint_inputs_to_the_host(self):
        llama = os.path.join(DATA, "hf", "llama-3.2-3b.json")
        on_gpu = batchfit.estimate(llama, seq=8192, batch_size=1, precision="pure-bf16", lora_rank=16,
                                   checkpointing="every-block")
        host = batchfit.estimate(llama, seq=8192, batch_size=1, precision="pure-bf16", lora_rank=16,
                                 checkpointing="every-block", activation_offload="checkpoints")
        self.assertLess(host.peak_allocated_bytes, on_gpu.peak_allocated_bytes)
        self.assertEqual(on_gpu.json["totals"]["host_activation_bytes"], 0)
        # 28 layers' [8192, 3072] bf16 inputs, each rounded up to a power of two by the pinned allocator
        self.assertEqual(host.json["totals"]["host_activation_bytes"], 28 * 2 ** 26)
        self.assertEqual(host.json["totals"]["activation_transfer_bytes"], 2 * 28 * 8192 * 3072 * 2)


class LiveModules(unittest.TestCase):
    def test_an_exported_module_equals_the_exporter_file_route(self):
        import torch
        import torch.nn as nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.Flatten(),
                              nn.Linear(16 * 32 * 32, 10))
        r = batchfit.estimate(model, torch.randn(1, 3, 32, 32), batch_size=64, gpu="rtx-4090")
        self.assertEqual(r.json["totals"]["parameter_count"], sum(p.numel() for p in model.parameters()))
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "m.json")
            with open(os.path.join(tmp, "m.py"), "w") as f:
                f.write("import torch.nn as nn\n"
                        "def build():\n"
                        "    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),\n"
                        "                         nn.Flatten(), nn.Linear(16 * 32 * 32, 10))\n")
            subprocess.run([sys.executable, os.path.join(SOURCE, "tools", "torch_export.py"),
                            os.path.join(tmp, "m.py") + ":build", "--input-shape", "3,32,32", "--out", out,
                            "--quiet"], check=True)
            theirs = cli_json("estimate", "--model", out, "--batch", "64", "--gpu", "rtx-4090")
        for key in ("totals", "required_bytes", "peak_allocated_bytes", "verdict", "max_batch"):
            self.assertEqual(r.json[key], theirs[key], key)

    def test_a_module_on_a_gpu_or_without_inputs_is_refused_with_a_reason(self):
        import torch.nn as nn
        with self.assertRaises(ValueError) as e:
            batchfit.estimate(nn.Linear(4, 4), None, gpu="rtx-4090")
        self.assertIn("example_inputs", str(e.exception))


if __name__ == "__main__":
    unittest.main()
