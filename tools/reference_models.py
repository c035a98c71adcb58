#!/usr/bin/python3
"""Torch definitions of the BatchFit presets, used as ground truth.

Every model is returned by ``build(name)`` as a ``Reference`` holding

* ``model``      - the nn.Module (train mode),
* ``loss``       - an nn.Module computing the scalar loss from (output, target),
* ``make_batch`` - ``make_batch(B) -> (inputs_tuple, target)``,
* ``default_optimizer``.

Dropout: on CPU ``F.dropout`` saves a float mask (it is ``input * bernoulli``),
while on CUDA ``F.dropout`` goes through ``native_dropout`` and saves a *bool*
mask.  To make CPU measurements reflect CUDA, every dropout (also the ones inside
the torchvision models) is replaced by :class:`NativeDropout`, which calls
``torch.native_dropout``.  Like CUDA's ``F.dropout`` it is the identity (nothing
saved) when ``p == 0`` or in eval mode.

Run with /usr/bin/python3 (Debian torch 1.13 CPU + torchvision 0.14).
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from batchfit.export.dropout import NativeDropout, replace_dropout  # noqa: E402,F401 (re-exported)


# --------------------------------------------------------------------------
# losses
# --------------------------------------------------------------------------
class CrossEntropy(nn.Module):
    """Cross-entropy; for 3-D logits [B,S,V] it is taken over every position
    (logits.view(-1, V) against labels.view(-1)), as in HF LM heads."""

    def forward(self, logits, target):
        if logits.dim() == 3:
            return F.cross_entropy(logits.view(-1, logits.size(-1)), target.view(-1))
        return F.cross_entropy(logits, target)


# --------------------------------------------------------------------------
# BERT-base encoder (HF BertModel eager code, no padding mask)
# --------------------------------------------------------------------------
class BertEmbeddings(nn.Module):
    def __init__(self, vocab=30522, hidden=768, max_pos=512, type_vocab=2, eps=1e-12, p=0.1, seq=128):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(max_pos, hidden)
        self.token_type_embeddings = nn.Embedding(type_vocab, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=eps)
        self.dropout = NativeDropout(p)
        # position_ids: registered buffer arange(seq) viewed as [1, seq] (storage seq*8 B).
        # NOTE: HF registers arange(max_pos=512) and slices [:, :seq]; the saved embedding
        # indices are then a view of a 4096 B storage (3072 B more than the reference).
        self.register_buffer("position_ids", torch.arange(seq).expand((1, -1)))

    def forward(self, input_ids, token_type_ids):
        seq = input_ids.size(1)
        position_ids = self.position_ids[:, :seq]  # [1,S] view of a [1,512] buffer
        inputs_embeds = self.word_embeddings(input_ids)
        token_type_embeddings = self.token_type_embeddings(token_type_ids)
        embeddings = inputs_embeds + token_type_embeddings
        position_embeddings = self.position_embeddings(position_ids)
        embeddings += position_embeddings
        embeddings = self.LayerNorm(embeddings)
        embeddings = self.dropout(embeddings)
        return embeddings


class BertSelfAttention(nn.Module):
    def __init__(self, hidden=768, heads=12, p=0.1):
        super().__init__()
        self.num_attention_heads = heads
        self.attention_head_size = hidden // heads
        self.all_head_size = hidden
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.dropout = NativeDropout(p)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        x = x.view(new_x_shape)
        return x.permute(0, 2, 1, 3)

    def forward(self, hidden_states):
        mixed_query_layer = self.query(hidden_states)
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        query_layer = self.transpose_for_scores(mixed_query_layer)
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        attention_probs = F.softmax(attention_scores, dim=-1)
        attention_probs = self.dropout(attention_probs)
        context_layer = torch.matmul(attention_probs, value_layer)
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        new_context_layer_shape = context_layer.size()[:-2] + (self.all_head_size,)
        return context_layer.view(new_context_layer_shape)


class BertSelfOutput(nn.Module):
    def __init__(self, hidden=768, eps=1e-12, p=0.1):
        super().__init__()
        self.dense = nn.Linear(hidden, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=eps)
        self.dropout = NativeDropout(p)

    def forward(self, hidden_states, input_tensor):
        hidden_states = self.dense(hidden_states)
        hidden_states = self.dropout(hidden_states)
        return self.LayerNorm(hidden_states + input_tensor)


class BertAttention(nn.Module):
    def __init__(self, hidden=768, heads=12, eps=1e-12, p=0.1):
        super().__init__()
        self.self = BertSelfAttention(hidden, heads, p)
        self.output = BertSelfOutput(hidden, eps, p)

    def forward(self, hidden_states):
        return self.output(self.self(hidden_states), hidden_states)


class BertIntermediate(nn.Module):
    def __init__(self, hidden=768, inter=3072):
        super().__init__()
        self.dense = nn.Linear(hidden, inter)
        self.intermediate_act_fn = nn.GELU()

    def forward(self, hidden_states):
        return self.intermediate_act_fn(self.dense(hidden_states))


class BertOutput(nn.Module):
    def __init__(self, hidden=768, inter=3072, eps=1e-12, p=0.1):
        super().__init__()
        self.dense = nn.Linear(inter, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=eps)
        self.dropout = NativeDropout(p)

    def forward(self, hidden_states, input_tensor):
        hidden_states = self.dense(hidden_states)
        hidden_states = self.dropout(hidden_states)
        return self.LayerNorm(hidden_states + input_tensor)


class BertLayer(nn.Module):
    def __init__(self, hidden=768, heads=12, inter=3072, eps=1e-12, p=0.1):
        super().__init__()
        self.attention = BertAttention(hidden, heads, eps, p)
        self.intermediate = BertIntermediate(hidden, inter)
        self.output = BertOutput(hidden, inter, eps, p)

    def forward(self, hidden_states):
        attention_output = self.attention(hidden_states)
        intermediate_output = self.intermediate(attention_output)
        return self.output(intermediate_output, attention_output)


class BertEncoder(nn.Module):
    def __init__(self, layers=12, **kw):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(**kw) for _ in range(layers)])

    def forward(self, hidden_states):
        for layer_module in self.layer:
            hidden_states = layer_module(hidden_states)
        return hidden_states


class BertPooler(nn.Module):
    def __init__(self, hidden=768):
        super().__init__()
        self.dense = nn.Linear(hidden, hidden)
        self.activation = nn.Tanh()

    def forward(self, hidden_states):
        first_token_tensor = hidden_states[:, 0]  # select view of [B,S,H]
        return self.activation(self.dense(first_token_tensor))


class BertForSequenceClassification(nn.Module):
    """bert = embeddings + encoder + pooler; dropout; classifier (like HF)."""

    def __init__(self, layers=12, hidden=768, heads=12, inter=3072, num_labels=2, p=0.1):
        super().__init__()
        self.embeddings = BertEmbeddings(hidden=hidden, p=p)
        self.encoder = BertEncoder(layers, hidden=hidden, heads=heads, inter=inter, p=p)
        self.pooler = BertPooler(hidden)
        self.dropout = NativeDropout(p)
        self.classifier = nn.Linear(hidden, num_labels)

    def forward(self, input_ids, token_type_ids):
        x = self.embeddings(input_ids, token_type_ids)
        x = self.encoder(x)
        pooled = self.pooler(x)
        return self.classifier(self.dropout(pooled))


# --------------------------------------------------------------------------
# GPT-2 small (HF GPT2LMHeadModel eager code)
# --------------------------------------------------------------------------
class GPT2Attention(nn.Module):
    def __init__(self, d=768, heads=12, n_pos=1024, p=0.1):
        super().__init__()
        self.register_buffer(
            "bias",
            torch.tril(torch.ones((n_pos, n_pos), dtype=torch.bool)).view(1, 1, n_pos, n_pos),
        )
        self.embed_dim = d
        self.num_heads = heads
        self.head_dim = d // heads
        self.split_size = d
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.attn_dropout = NativeDropout(p)
        self.resid_dropout = NativeDropout(p)

    def _split_heads(self, tensor):
        new_shape = tensor.size()[:-1] + (self.num_heads, self.head_dim)
        tensor = tensor.view(new_shape)
        return tensor.permute(0, 2, 1, 3)  # (batch, head, seq, head_dim)

    def _merge_heads(self, tensor):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        new_shape = tensor.size()[:-2] + (self.num_heads * self.head_dim,)
        return tensor.view(new_shape)

    def _attn(self, query, key, value):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / torch.full(
            [], value.size(-1) ** 0.5, dtype=attn_weights.dtype, device=attn_weights.device
        )
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype).to(attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        attn_weights = F.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.type(value.dtype)
        attn_weights = self.attn_dropout(attn_weights)
        return torch.matmul(attn_weights, value)

    def forward(self, hidden_states):
        query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
        query = self._split_heads(query)
        key = self._split_heads(key)
        value = self._split_heads(value)
        attn_output = self._attn(query, key, value)
        attn_output = self._merge_heads(attn_output)
        attn_output = self.c_proj(attn_output)
        return self.resid_dropout(attn_output)


class GPT2MLP(nn.Module):
    def __init__(self, d=768, inner=3072, p=0.1):
        super().__init__()
        self.c_fc = nn.Linear(d, inner)
        self.c_proj = nn.Linear(inner, d)
        self.act = nn.GELU(approximate="tanh")
        self.dropout = NativeDropout(p)

    def forward(self, hidden_states):
        hidden_states = self.c_fc(hidden_states)
        hidden_states = self.act(hidden_states)
        hidden_states = self.c_proj(hidden_states)
        return self.dropout(hidden_states)


class GPT2Block(nn.Module):
    def __init__(self, d=768, heads=12, inner=3072, n_pos=1024, eps=1e-5, p=0.1):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d, eps=eps)
        self.attn = GPT2Attention(d, heads, n_pos, p)
        self.ln_2 = nn.LayerNorm(d, eps=eps)
        self.mlp = GPT2MLP(d, inner, p)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.ln_1(hidden_states)
        attn_output = self.attn(hidden_states)
        hidden_states = attn_output + residual
        residual = hidden_states
        hidden_states = self.ln_2(hidden_states)
        feed_forward_hidden_states = self.mlp(hidden_states)
        return residual + feed_forward_hidden_states


class GPT2LMHeadModel(nn.Module):
    def __init__(self, vocab=50257, n_pos=1024, d=768, layers=12, heads=12, p=0.1):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(n_pos, d)
        self.drop = NativeDropout(p)
        self.h = nn.ModuleList([GPT2Block(d, heads, 4 * d, n_pos, p=p) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d, eps=1e-5)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied

    def forward(self, input_ids):
        seq = input_ids.size(-1)
        position_ids = torch.arange(0, seq, dtype=torch.long, device=input_ids.device)
        position_ids = position_ids.unsqueeze(0).view(-1, seq)
        inputs_embeds = self.wte(input_ids)
        position_embeds = self.wpe(position_ids)
        hidden_states = inputs_embeds + position_embeds
        hidden_states = self.drop(hidden_states)
        for block in self.h:
            hidden_states = block(hidden_states)
        hidden_states = self.ln_f(hidden_states)
        return self.lm_head(hidden_states)  # fp32 logits [B,S,V]


# --------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------
class Reference:
    def __init__(self, name, model, loss, make_batch, default_optimizer="adam"):
        self.name = name
        self.model = model
        self.loss = loss
        self.make_batch = make_batch
        self.default_optimizer = default_optimizer
        self.optimizer_batch = lambda: make_batch(1)


def _image_batch(num_classes=1000, size=224):
    def make(B):
        x = torch.randn(B, 3, size, size)
        y = torch.randint(0, num_classes, (B,), dtype=torch.int64)
        return (x,), y
    return make


def _torchvision(fn):
    import torchvision.models as tvm
    m = getattr(tvm, fn)(weights=None, num_classes=1000)
    return replace_dropout(m)


def build(name):
    torch.manual_seed(0)
    if name in ("resnet50", "vgg16", "mobilenet_v2", "vit_b_16"):
        model = _torchvision(name)
        ref = Reference(name, model, CrossEntropy(), _image_batch(), "adam")
    elif name == "transformer-12":
        model = BertForSequenceClassification()
        seq = 128

        def make(B, seq=seq):
            input_ids = torch.randint(0, 30522, (B, seq), dtype=torch.int64)
            token_type_ids = torch.zeros(B, seq, dtype=torch.int64)
            labels = torch.randint(0, 2, (B,), dtype=torch.int64)
            return (input_ids, token_type_ids), labels
        ref = Reference(name, model, CrossEntropy(), make, "adam")
    elif name == "gpt2-small":
        model = GPT2LMHeadModel()
        seq = 1024

        def make(B, seq=seq):
            input_ids = torch.randint(0, 50257, (B, seq), dtype=torch.int64)
            # labels = the input ids (no shift), as a separate tensor: HF's
            # DataCollatorForLanguageModeling(mlm=False) does labels = input_ids.clone().
            # Sharing the input_ids storage instead saves B*S*8 B less.
            return (input_ids,), input_ids.clone()
        ref = Reference(name, model, CrossEntropy(), make, "adamw")
        ref.optimizer_batch = lambda: make(1, seq=64)  # state bytes do not depend on the input size
    else:
        raise KeyError(f"unknown model {name!r}; known: {MODELS}")
    ref.model.train()
    return ref


MODELS = ["resnet50", "transformer-12", "gpt2-small", "vgg16", "mobilenet_v2", "vit_b_16"]
