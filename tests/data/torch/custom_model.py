"""A small language model for tests/torch/test_export.py: tied embedding, frozen layers, residuals,
a module called twice and a concatenation.

    TinyLM(vocab=1000, d=64, seq=32, hidden=128)   input: int64 token ids [B, seq]

* ``head`` shares its weight with ``wte`` (tied LM head, counted once);
* ``wpe`` (the position table) and ``ln_f`` are frozen (``requires_grad=False``);
* two residual blocks (``h + mlp(ln(h))``);
* ``proj`` is called twice (shared weights);
* ``torch.cat`` of two halves along the feature dim.
"""
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, d)
        self.drop = nn.Dropout(0.1)

    def forward(self, h):
        return h + self.drop(self.fc2(self.act(self.fc1(self.ln(h)))))


class TinyLM(nn.Module):
    def __init__(self, vocab=1000, d=64, seq=32, hidden=128):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(seq, d)
        self.wpe.weight.requires_grad_(False)
        self.blocks = nn.ModuleList([Block(d, hidden) for _ in range(2)])
        self.proj = nn.Linear(d, d // 2)
        self.ln_f = nn.LayerNorm(d)
        self.ln_f.requires_grad_(False)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.wte.weight

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device)
        h = self.wte(ids) + self.wpe(pos)
        for block in self.blocks:
            h = block(h)
        a = torch.relu(self.proj(h))
        b = torch.tanh(self.proj(h * 0.5))
        r = torch.cat([a, b], dim=-1)
        h = h + torch.cat((-r[..., 16:], r[..., :16]), dim=-1)  # rotate_half's slicing: x[..., :k], x[..., k:]
        return self.head(self.ln_f(h))


class WithUpsample(nn.Module):
    """A CNN with ops BatchFit has no op for (nn.Upsample, torch.roll): the exporter must name them
    (exit 2), or write them as opaque layers with --allow-opaque."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv1(x)))
        y = torch.roll(self.up(x), 1, dims=2)
        y = nn.functional.max_pool2d(self.conv2(y), 2)
        x = x + torch.sigmoid(y)
        return self.fc(x.mean([2, 3]))
