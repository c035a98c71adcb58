"""The callbacks in real training loops on the CPU: a transformers Trainer (and a PEFT LoRA model read from the live
objects) and a Lightning Trainer. Each sets the batch to BatchFit's largest, and stops before the first step on a
set-up that cannot fit. Needs torch, transformers, peft and lightning (the measurement venv, tools/
requirements-measure.txt); each test is skipped where its library is missing. Run by tests/python/run_tests.sh."""
import importlib.util
import logging
import os
import subprocess
import unittest

import batchfit

CLI = os.environ["BATCHFIT_CLI"]
logging.getLogger("batchfit").setLevel(logging.ERROR)


def have(*modules):
    return all(importlib.util.find_spec(m) is not None for m in modules)


def tiny_gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config(n_layer=2, n_embd=128, n_head=4, vocab_size=512, n_positions=128, bos_token_id=0,
                     eos_token_id=0)
    return GPT2LMHeadModel(cfg)


def token_dataset(n=64, seq=48):
    import torch
    g = torch.Generator().manual_seed(0)
    return [{"input_ids": torch.randint(0, 512, (seq,), generator=g), "labels": torch.randint(0, 512, (seq,),
                                                                                              generator=g)}
            for _ in range(n)]


@unittest.skipUnless(have("torch", "transformers"), "needs torch and transformers")
class TrainerCallback(unittest.TestCase):
    def trainer(self, batch, callback, model=None, **args):
        from transformers import Trainer, TrainingArguments
        targs = TrainingArguments(os.path.join(os.environ.get("TMPDIR", "/tmp"), "batchfit-trainer-test"),
                                  per_device_train_batch_size=batch, max_steps=1, report_to=[], use_cpu=True,
                                  save_strategy="no", **args)
        return Trainer(model or tiny_gpt2(), targs, train_dataset=token_dataset(), callbacks=[callback])

    def test_set_makes_the_dataloader_batch_the_largest_that_fits(self):
        from batchfit.integrations.transformers import BatchFitCallback
        cb = BatchFitCallback(gpu="1GiB", action="set")
        tr = self.trainer(2, cb)
        self.assertGreater(cb.largest, 2)
        # the answer is the CLI's for the set-up the Trainer runs (AdamW, the Trainer's default optimizer, seq 48)
        line = subprocess.run([CLI, "max-batch", *cb.result._args[1:]], capture_output=True, text=True).stdout
        self.assertIn(f"largest batch {cb.largest}", line)
        self.assertEqual(tr.args.per_device_train_batch_size, cb.largest)
        self.assertEqual(tr.get_train_dataloader().total_batch_size, cb.largest)
        tr.train()
        self.assertEqual(tr.state.global_step, 1)

    def test_stop_raises_before_the_first_step(self):
        from batchfit.integrations.transformers import BatchFitCallback, BatchFitOutOfMemory
        cb = BatchFitCallback(gpu="1GiB", action="stop")
        tr = self.trainer(4096, cb)
        self.assertFalse(cb.result.fits)
        with self.assertRaises(BatchFitOutOfMemory) as e:
            tr.train()
        self.assertIn("out of memory", str(e.exception))
        self.assertEqual(tr.state.global_step, 0)

    def test_the_trainer_settings_reach_the_estimate(self):
        from batchfit.integrations.transformers import BatchFitCallback
        cb = BatchFitCallback(gpu="24GiB")
        self.trainer(4, cb, gradient_accumulation_steps=3, optim="adafactor", gradient_checkpointing=True)
        config = cb.result.json["config"]
        self.assertEqual((config["accumulation_steps"], config["optimizer"], config["checkpointing"]),
                         (3, "adafactor", "every-block"))
        self.assertEqual(cb.result.batch_size, 4)

    @unittest.skipUnless(have("peft"), "needs peft")
    def test_a_peft_model_is_read_from_the_live_objects(self):
        from peft import LoraConfig, get_peft_model
        model = get_peft_model(tiny_gpt2(), LoraConfig(r=8, lora_alpha=16, target_modules=["c_attn"],
                                                       lora_dropout=0.0))
        trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
        r = batchfit.estimate(model, batch_size=2, gpu="rtx-4090", seq=48)
        self.assertEqual(r.json["totals"]["trainable_parameter_count"], trainable)
        self.assertEqual(r.json["totals"]["parameter_count"], sum(p.numel() for p in model.parameters()))
        # DoRA: one magnitude per output row more, and a larger step than plain LoRA on the same targets
        from peft import LoraConfig as L2
        dora = get_peft_model(tiny_gpt2(), L2(r=8, lora_alpha=16, target_modules=["c_attn"], use_dora=True))
        d = batchfit.estimate(dora, batch_size=2, gpu="rtx-4090", seq=48)
        self.assertEqual(d.json["config"]["lora"]["dora"], True)
        self.assertEqual(d.json["totals"]["trainable_parameter_count"],
                         sum(p.numel() for p in dora.parameters() if p.requires_grad))
        self.assertGreater(d.json["totals"]["saved_activation_bytes"], r.json["totals"]["saved_activation_bytes"])


@unittest.skipUnless(have("torch", "lightning"), "needs torch and lightning")
class LightningCallback(unittest.TestCase):
    def fit(self, batch, callback):
        import lightning as L
        import torch
        import torch.nn as nn
        from torch.utils.data import DataLoader, TensorDataset

        class Data(L.LightningDataModule):
            def __init__(self):
                super().__init__()
                self.batch_size = batch
                self.seen = []

            def train_dataloader(self):
                x = torch.randn(200000, 64)
                y = torch.randint(0, 10, (200000,))
                return DataLoader(TensorDataset(x, y), batch_size=self.batch_size)

        class Net(L.LightningModule):
            def __init__(self):
                super().__init__()
                self.net = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10))
                self.example_input_array = torch.randn(1, 64)

            def forward(self, x):
                return self.net(x)

            def training_step(self, b, _):
                self.trainer.datamodule.seen.append(b[0].shape[0])
                return nn.functional.cross_entropy(self(b[0]), b[1])

            def configure_optimizers(self):
                return torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)

        data = Data()
        trainer = L.Trainer(max_steps=1, accelerator="cpu", logger=False, enable_checkpointing=False,
                            enable_progress_bar=False, enable_model_summary=False, callbacks=[callback])
        trainer.fit(Net(), datamodule=data)
        return data

    def test_set_and_stop(self):
        from batchfit.integrations.lightning import BatchFitCallback, BatchFitOutOfMemory
        cb = BatchFitCallback(gpu="1GiB", action="set")
        data = self.fit(8, cb)
        self.assertEqual(cb.result.json["config"]["optimizer"], "sgd-momentum")
        self.assertGreater(cb.largest, 8)
        self.assertEqual(data.seen, [cb.largest])
        with self.assertRaises(BatchFitOutOfMemory):
            self.fit(2**30, BatchFitCallback(gpu="1GiB", action="stop"))


if __name__ == "__main__":
    unittest.main()
