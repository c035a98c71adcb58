"""Models written by hand the way people copy them (not from a library), for the exporter's quick set.

HandBert: token, position and token-type embeddings, where the position ids are a slice of an arange buffer and
the token-type ids are torch.zeros_like(ids) (an embedding indexed by a tensor the model builds itself), then
post-norm blocks with attention written out (qkv linear, split, view/transpose, q @ k^T, softmax, @ v).
"""
import math
import torch, torch.nn as nn, torch.nn.functional as F

class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)
        self.ln2 = nn.LayerNorm(d)

    def forward(self, x):
        B, S, D = x.shape
        q, k, v = self.qkv(x).split(D, dim=2)
        q = q.view(B, S, self.h, D // self.h).transpose(1, 2)
        k = k.view(B, S, self.h, D // self.h).transpose(1, 2)
        v = v.view(B, S, self.h, D // self.h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(D // self.h)
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, S, D)
        x = self.ln1(x + self.proj(y))
        return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))

class HandBert(nn.Module):
    def __init__(self, vocab=1000, d=64, seq=128, layers=2, heads=4):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        self.tok_type = nn.Embedding(2, d)
        self.register_buffer("position_ids", torch.arange(seq).unsqueeze(0))
        self.norm = nn.LayerNorm(d)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        x = self.tok(ids) + self.pos(self.position_ids[:, : ids.shape[1]]) + self.tok_type(torch.zeros_like(ids))
        x = self.norm(x)
        for b in self.blocks:
            x = b(x)
        return self.head(x)
