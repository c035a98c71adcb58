"""Models written by hand the way people copy them (not from a library), for the exporter's quick set.

NanoGpt: Karpathy's nanoGPT (masked_fill on a float tril buffer compared with 0, GELU(tanh), tied head).
CheckpointedMlp: blocks run through torch.utils.checkpoint (exported as checkpoint blocks).
HandLlama: RMSNorm written as pow/mean/rsqrt/mul and `weight * x`, SwiGLU, torch.where on one bool causal buffer
shared by every block.
HandBert: token, position and token-type embeddings, where the position ids are a slice of an arange buffer and
the token-type ids are torch.zeros_like(ids) (an embedding indexed by a tensor the model builds itself), then
post-norm blocks with attention written out (qkv linear, split, view/transpose, q @ k^T, softmax, @ v).
sdpa=True (HandBert, HandLlama): F.scaled_dot_product_attention instead.
UNet: max-pool down, ConvTranspose2d up, concatenated skips (docs/accuracy-torch2.md's matrix).
"""
import math
import torch, torch.nn as nn, torch.nn.functional as F

class Block(nn.Module):
    def __init__(self, d, heads, sdpa=False):
        super().__init__()
        self.h = heads
        self.sdpa = sdpa  # F.scaled_dot_product_attention instead of the attention written out
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
        if self.sdpa:
            y = F.scaled_dot_product_attention(q, k, v)
        else:
            att = (q @ k.transpose(-2, -1)) / math.sqrt(D // self.h)
            att = F.softmax(att, dim=-1)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, S, D)
        x = self.ln1(x + self.proj(y))
        return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))

class HandBert(nn.Module):
    def __init__(self, vocab=1000, d=64, seq=128, layers=2, heads=4, sdpa=False):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        self.tok_type = nn.Embedding(2, d)
        self.register_buffer("position_ids", torch.arange(seq).unsqueeze(0))
        self.norm = nn.LayerNorm(d)
        self.blocks = nn.ModuleList([Block(d, heads, sdpa) for _ in range(layers)])
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        x = self.tok(ids) + self.pos(self.position_ids[:, : ids.shape[1]]) + self.tok_type(torch.zeros_like(ids))
        x = self.norm(x)
        for b in self.blocks:
            x = b(x)
        return self.head(x)


class CausalSelfAttention(nn.Module):
    """nanoGPT's attention as people copy it: a float tril buffer, masked_fill(bias == 0, -inf), softmax."""

    def __init__(self, d, heads, block, flash=False):
        super().__init__()
        self.flash = flash  # nanoGPT: F.scaled_dot_product_attention(is_causal=True) when torch has it
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.attn_dropout = nn.Dropout(0.1)
        self.resid_dropout = nn.Dropout(0.1)
        self.n_head = heads
        self.register_buffer("bias", torch.tril(torch.ones(block, block)).view(1, 1, block, block))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class GptBlock(nn.Module):
    def __init__(self, d, heads, block, flash=False):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, heads, block, flash)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = nn.Linear(d, 4 * d)
        self.c_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class NanoGpt(nn.Module):
    """nanoGPT (Karpathy): learned positions from torch.arange, tied lm_head, GELU(tanh), the masked_fill mask."""

    def __init__(self, vocab=1000, d=64, block=128, layers=2, heads=4, flash=False):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(block, d)
        self.drop = nn.Dropout(0.1)
        self.h = nn.ModuleList([GptBlock(d, heads, block, flash) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.wte.weight = self.lm_head.weight

    def forward(self, idx):
        t = idx.size(1)
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


class RMSNorm(nn.Module):
    """Llama's RMSNorm written out: x * rsqrt(mean(x²) + eps) * weight."""

    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x


class LlamaBlock(nn.Module):
    def __init__(self, d, heads, hidden, sdpa=False, kv_heads=None):
        super().__init__()
        self.h = heads
        self.kv = kv_heads or heads  # fewer: grouped-query attention (SDPA's enable_gqa)
        self.sdpa = sdpa  # F.scaled_dot_product_attention(is_causal=True), as Hugging Face's sdpa attention
        self.attention_norm = RMSNorm(d)
        self.wq = nn.Linear(d, d, bias=False)
        self.wk = nn.Linear(d, d // heads * self.kv, bias=False)
        self.wv = nn.Linear(d, d // heads * self.kv, bias=False)
        self.wo = nn.Linear(d, d, bias=False)
        self.ffn_norm = RMSNorm(d)
        self.w1 = nn.Linear(d, hidden, bias=False)
        self.w2 = nn.Linear(hidden, d, bias=False)
        self.w3 = nn.Linear(d, hidden, bias=False)

    def forward(self, x, mask):
        B, S, D = x.shape
        h = self.attention_norm(x)
        q = self.wq(h).view(B, S, self.h, D // self.h).transpose(1, 2)
        k = self.wk(h).view(B, S, self.kv, D // self.h).transpose(1, 2)
        v = self.wv(h).view(B, S, self.kv, D // self.h).transpose(1, 2)
        if self.sdpa:
            gqa = {"enable_gqa": True} if self.kv != self.h else {}
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, **gqa)
        else:
            att = (q @ k.transpose(2, 3)) / math.sqrt(D // self.h)
            att = torch.where(mask, att, torch.finfo(att.dtype).min)
            att = F.softmax(att.float(), dim=-1).type_as(q)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, S, D)
        x = x + self.wo(y)
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class HandLlama(nn.Module):
    """A Llama-style decoder written by hand: RMSNorm as elementwise ops, SwiGLU, a bool causal buffer used
    through torch.where, no biases, an untied head."""

    def __init__(self, vocab=1000, d=64, seq=128, layers=2, heads=4, hidden=172, sdpa=False, kv_heads=None):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([LlamaBlock(d, heads, hidden, sdpa, kv_heads) for _ in range(layers)])
        self.norm = RMSNorm(d)
        self.output = nn.Linear(d, vocab, bias=False)
        self.register_buffer("causal", torch.ones(seq, seq, dtype=torch.bool).tril())

    def forward(self, ids):
        S = ids.shape[1]
        x = self.tok_embeddings(ids)
        mask = self.causal[:S, :S]
        for layer in self.layers:
            x = layer(x, mask)
        return self.output(self.norm(x))


class _CkBlock(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.ln, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


class CheckpointedMlp(nn.Module):
    """Three residual MLP blocks, each run through torch.utils.checkpoint (use_reentrant as given)."""

    def __init__(self, reentrant=False):
        super().__init__()
        self.proj = nn.Linear(64, 64)
        self.blocks = nn.ModuleList([_CkBlock() for _ in range(3)])
        self.head = nn.Linear(64, 10)
        self.reentrant = reentrant

    def forward(self, x):
        from torch.utils.checkpoint import checkpoint
        h = self.proj(x)
        for b in self.blocks:
            h = checkpoint(b, h, use_reentrant=self.reentrant)
        return self.head(h)


class DoubleConv(nn.Sequential):
    """U-Net's (conv 3x3 -> BatchNorm -> ReLU(inplace)) x 2, as the common implementations write it."""

    def __init__(self, cin, cout):
        super().__init__(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class UNet(nn.Module):
    """A U-Net (Ronneberger et al. 2015) as people copy it: max-pool down, ConvTranspose2d up, skip connections
    concatenated on the channels, a 1x1 head."""

    def __init__(self, in_ch=3, classes=4, widths=(32, 64, 128, 256)):
        super().__init__()
        w = list(widths)
        self.downs = nn.ModuleList([DoubleConv(in_ch if i == 0 else w[i - 1], c) for i, c in enumerate(w[:-1])])
        self.pool = nn.MaxPool2d(2)
        self.bottleneck = DoubleConv(w[-2], w[-1])
        self.ups = nn.ModuleList([nn.ConvTranspose2d(w[i + 1], w[i], 2, stride=2) for i in reversed(range(len(w) - 1))])
        self.up_convs = nn.ModuleList([DoubleConv(2 * w[i], w[i]) for i in reversed(range(len(w) - 1))])
        self.head = nn.Conv2d(w[0], classes, 1)

    def forward(self, x):
        skips = []
        for d in self.downs:
            x = d(x)
            skips.append(x)
            x = self.pool(x)
        x = self.bottleneck(x)
        for up, conv, skip in zip(self.ups, self.up_convs, reversed(skips)):
            x = conv(torch.cat([up(x), skip], dim=1))
        return self.head(x)


class LoraLinear(nn.Module):
    """A LoRA-adapted nn.Linear written the way PEFT's lora.Linear runs (peft/tuners/lora/layer.py Linear.forward,
    peft 0.20): the frozen base_layer, then x cast to the adapters' dtype (fp32 adapters on a half base, as
    get_peft_model's autocast_adapter_dtype=True makes them), lora_dropout (nn.Identity when p == 0), lora_A,
    lora_B, * alpha / r, added to the base result, cast back to its dtype. PEFT is not packaged in Debian."""

    def __init__(self, base, r, alpha, dropout):
        super().__init__()
        self.base_layer = base
        self.lora_dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        dt = torch.float32 if base.weight.dtype in (torch.float16, torch.bfloat16) else base.weight.dtype
        self.lora_A = nn.Linear(base.in_features, r, bias=False).to(dt)
        self.lora_B = nn.Linear(r, base.out_features, bias=False).to(dt)
        nn.init.zeros_(self.lora_B.weight)
        self.scaling = alpha / r

    def forward(self, x):
        result = self.base_layer(x)
        torch_result_dtype = result.dtype
        if x.dtype != self.lora_A.weight.dtype:
            x = x.to(dtype=self.lora_A.weight.dtype)
        result = result + self.lora_B(self.lora_A(self.lora_dropout(x))) * self.scaling
        return result.to(torch_result_dtype)


def apply_lora(model, targets, r, alpha=8, dropout=0.0, train_only=()):
    """get_peft_model's effect: every parameter frozen, each nn.Linear whose name is a target (or ends with
    "." + target, PEFT's check_target_module_exists) wrapped in LoraLinear; `train_only` modules (modules_to_save)
    train too. Returns the wrapped module names."""
    for p in model.parameters():
        p.requires_grad_(False)
    wrapped = []
    for name, parent in list(model.named_modules()):
        for cname, child in list(parent.named_children()):
            full = f"{name}.{cname}" if name else cname
            if isinstance(child, nn.Linear) and any(full == t or full.endswith("." + t) for t in targets):
                setattr(parent, cname, LoraLinear(child, r, alpha, dropout))
                wrapped.append(full)
    for name, m in model.named_modules():
        if name in train_only:
            for p in m.parameters():
                p.requires_grad_(True)
    return wrapped


class MoeExpertMlp(nn.Module):
    """One expert: transformers' MixtralBlockSparseTop2MLP (w1 = gate, w3 = up, w2 = down, SiLU)."""

    def __init__(self, d, inner):
        super().__init__()
        self.w1 = nn.Linear(d, inner, bias=False)
        self.w2 = nn.Linear(inner, d, bias=False)
        self.w3 = nn.Linear(d, inner, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class HfSparseMoe(nn.Module):
    """transformers' MixtralSparseMoeBlock.forward (modeling_mixtral.py, 4.4x-4.5x), line for line: router linear,
    softmax in fp32, topk, renormalisation (norm_topk_prob; Mixtral always), then per hit expert: index the routed
    tokens, the expert MLP, * routing weight, index_add_ into the output. Qwen2-MoE / Qwen3-MoE run the same loop.
    A proj_in linear in front makes the block's input require grad, as inside a real stack.
    route="balanced" sets the router so that token t picks experts t % E and (t + 1) % E (top-2): every expert gets
    tokens * top_k / E tokens, BatchFit's moe_load "balanced"."""

    def __init__(self, d=64, experts=4, top_k=2, inner=128, norm_topk_prob=True, route="balanced"):
        super().__init__()
        self.num_experts, self.top_k, self.norm_topk_prob = experts, top_k, norm_topk_prob
        self.proj_in = nn.Linear(d, d)
        self.gate = nn.Linear(d, experts, bias=False)
        self.experts = nn.ModuleList([MoeExpertMlp(d, inner) for _ in range(experts)])
        if route == "balanced":
            with torch.no_grad():
                self.proj_in.weight.copy_(torch.eye(d))
                self.proj_in.bias.zero_()
                self.gate.weight.zero_()
                self.gate.weight[:, :experts] = torch.eye(experts)

    @staticmethod
    def balanced_input(batch, seq, d=64, experts=4, worst=False):
        """Token t: 2 on feature t % E, 1 on feature (t + 1) % E (the router reads the first E features).
        worst=True: every token 2 on feature 0 and 1 on feature 1 (experts 0 and 1 get every token)."""
        x = torch.zeros(batch, seq, d)
        for t in range(seq):
            x[:, t, 0 if worst else t % experts] = 2.0
            x[:, t, 1 if worst else (t + 1) % experts] = 1.0
        return x

    def forward(self, x):
        hidden_states = self.proj_in(x)
        batch_size, sequence_length, hidden_dim = hidden_states.shape
        hidden_states = hidden_states.view(-1, hidden_dim)
        router_logits = self.gate(hidden_states)
        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        if self.norm_topk_prob:
            routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        routing_weights = routing_weights.to(hidden_states.dtype)
        final_hidden_states = torch.zeros(
            (batch_size * sequence_length, hidden_dim), dtype=hidden_states.dtype, device=hidden_states.device)
        expert_mask = F.one_hot(selected_experts, num_classes=self.num_experts).permute(2, 1, 0)
        self.tokens_per_expert = [int(expert_mask[e].sum()) for e in range(self.num_experts)]
        expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
        for expert_idx in expert_hit:
            expert_layer = self.experts[expert_idx]
            idx, top_x = torch.where(expert_mask[expert_idx].squeeze(0))
            current_state = hidden_states[None, top_x].reshape(-1, hidden_dim)
            current_hidden_states = expert_layer(current_state) * routing_weights[top_x, idx, None]
            final_hidden_states.index_add_(0, top_x, current_hidden_states.to(hidden_states.dtype))
        return final_hidden_states.reshape(batch_size, sequence_length, hidden_dim)
