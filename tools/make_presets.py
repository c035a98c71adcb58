#!/usr/bin/python3
"""Write the built-in BatchFit presets (resources/presets/*.json).

    python3 tools/make_presets.py            # write the presets
    python3 tools/make_presets.py --check    # check them (see below), write nothing
    python3 tools/make_presets.py --check --no-torch   # the same without the torch part
    python3 tools/make_presets.py --out DIR  # write somewhere else

Every preset is a model file as docs/model-format.md defines it.  Plain Python 3,
no third-party module is needed to generate them.

--check verifies, for every preset:
  * the files on disk are exactly what this script generates (unless --out is given),
  * shapes propagate through the whole model (a small shape inference following the
    op catalogue, including residual merges and explicit inputs),
  * the parameter count (a pure-Python counter following the op catalogue) equals the
    published figure,
  * the preset validates against resources/model.schema.json (where the jsonschema
    module is importable; Debian: apt-get install python3-jsonschema),
  * where torch is importable (Debian's /usr/bin/python3 has torch + torchvision):
    the multiset of parameter-tensor sizes equals the torch model's -- torchvision for
    resnet50 / vgg16 / mobilenet_v2 / vit_b_16, tools/reference_models.py for
    transformer-12 / gpt2-small (no torch reference exists here for llama-2-7b).
"""
import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PRESET_DIR = os.path.join(ROOT, "resources", "presets")


# ---------------------------------------------------------------------------
# builders
# ---------------------------------------------------------------------------
def op(name, op_name, inputs=None, **attrs):
    """An op layer: name, op, [inputs], then the attributes sorted by key.
    A stride of 1 (the default) is left out."""
    if attrs.get("stride") == 1:
        del attrs["stride"]
    d = {"name": name, "op": op_name}
    if inputs is not None:
        d["inputs"] = list(inputs)
    for k in sorted(attrs):
        d[k] = attrs[k]
    return d


def block(name, layers, repeat=None, first_index=None, shortcut=None, after=None,
          merge=None, merge_dim=None, checkpoint=None, inputs=None):
    d = {"name": name}
    if inputs is not None:
        d["inputs"] = list(inputs)
    if repeat is not None:
        d["repeat"] = repeat
    if first_index is not None:
        d["first_index"] = first_index
    if checkpoint is not None:
        d["checkpoint"] = checkpoint
    d["layers"] = layers
    if shortcut is not None:
        d["shortcut"] = shortcut
    if merge is not None:
        d["merge"] = merge
    if merge_dim is not None:
        d["merge_dim"] = merge_dim
    if after is not None:
        d["after"] = after
    return d


def model(name, description, shape, dtype, layers):
    return {
        "format": "batchfit-model",
        "version": 1,
        "name": name,
        "description": description,
        "input": {"shape": shape, "dtype": dtype},
        "layers": layers,
    }


# ---------------------------------------------------------------------------
# ResNet-50 (torchvision resnet50, v1.5)
# ---------------------------------------------------------------------------
def bottleneck_layers(width, stride):
    out = width * 4
    return [
        op("conv1", "conv2d", out_channels=width, kernel=1, bias=False),
        op("bn1", "batchnorm2d"),
        op("relu1", "relu", inplace=True),
        op("conv2", "conv2d", out_channels=width, kernel=3, stride=stride, padding=1, bias=False),
        op("bn2", "batchnorm2d"),
        op("relu2", "relu", inplace=True),
        op("conv3", "conv2d", out_channels=out, kernel=1, bias=False),
        op("bn3", "batchnorm2d"),
    ]


def resnet_stage(name, width, blocks, stride):
    first = block(
        "", bottleneck_layers(width, stride), repeat=1, first_index=0,
        shortcut=[
            op("downsample_conv", "conv2d", out_channels=width * 4, kernel=1, stride=stride, bias=False),
            op("downsample_bn", "batchnorm2d"),
        ],
        after=[op("relu3", "relu", inplace=True)],
    )
    rest = block(
        "", bottleneck_layers(width, 1), repeat=blocks - 1, first_index=1,
        shortcut="identity",
        after=[op("relu3", "relu", inplace=True)],
    )
    return block(name, [first, rest])


def resnet50():
    layers = [
        op("conv1", "conv2d", out_channels=64, kernel=7, stride=2, padding=3, bias=False),
        op("bn1", "batchnorm2d"),
        op("relu", "relu", inplace=True),
        op("maxpool", "maxpool2d", kernel=3, stride=2, padding=1),
        resnet_stage("layer1", 64, 3, 1),
        resnet_stage("layer2", 128, 4, 2),
        resnet_stage("layer3", 256, 6, 2),
        resnet_stage("layer4", 512, 3, 2),
        op("avgpool", "adaptive_avgpool2d", output_size=1),
        op("flatten", "flatten"),
        op("fc", "linear", out_features=1000),
        op("loss", "cross_entropy"),
    ]
    desc = ("ResNet-50 v1.5 as torchvision.models.resnet50 (stride 2 in the 3x3 conv of the "
            "bottleneck; He et al., 'Deep Residual Learning for Image Recognition', 2015): "
            "224x224 RGB input, 1000 classes, cross-entropy loss. 25,557,032 parameters. "
            "Layer paths follow torchvision (layer2[0].conv2); torchvision's single shared "
            "bottleneck ReLU is written as relu1/relu2/relu3 and downsample.0/.1 as "
            "downsample_conv/downsample_bn.")
    return model("ResNet-50", desc, [3, 224, 224], "float32", layers)


# ---------------------------------------------------------------------------
# VGG-16 (torchvision vgg16, no batch norm)
# ---------------------------------------------------------------------------
def vgg16():
    cfg = [[64, 64], [128, 128], [256, 256, 256], [512, 512, 512], [512, 512, 512]]
    features = []
    for s, stage in enumerate(cfg, start=1):
        for i, ch in enumerate(stage, start=1):
            features.append(op(f"conv{s}_{i}", "conv2d", out_channels=ch, kernel=3, padding=1))
            features.append(op(f"relu{s}_{i}", "relu", inplace=True))
        features.append(op(f"pool{s}", "maxpool2d", kernel=2, stride=2))
    classifier = [
        op("fc1", "linear", out_features=4096),
        op("relu1", "relu", inplace=True),
        op("dropout1", "dropout", p=0.5),
        op("fc2", "linear", out_features=4096),
        op("relu2", "relu", inplace=True),
        op("dropout2", "dropout", p=0.5),
        op("fc3", "linear", out_features=1000),
    ]
    layers = [
        block("features", features),
        op("avgpool", "adaptive_avgpool2d", output_size=7),
        op("flatten", "flatten"),
        block("classifier", classifier),
        op("loss", "cross_entropy"),
    ]
    desc = ("VGG-16 (configuration D, no batch norm) as torchvision.models.vgg16 (Simonyan & "
            "Zisserman, 'Very Deep Convolutional Networks for Large-Scale Image Recognition', "
            "2014): 13 3x3 convs with in-place ReLU, 5 max-pools, adaptive average pool to 7x7, "
            "three fully connected layers with dropout 0.5; 224x224 RGB input, 1000 classes, "
            "cross-entropy loss. 138,357,544 parameters. torchvision's indices (features.0, "
            "classifier.0) are written as conv1_1 ... pool5 and fc1 ... fc3.")
    return model("VGG-16", desc, [3, 224, 224], "float32", layers)


# ---------------------------------------------------------------------------
# MobileNetV2 (torchvision mobilenet_v2, width 1.0)
# ---------------------------------------------------------------------------
def inverted_residual_layers(cin, cout, stride, t):
    hidden = cin * t
    layers = []
    if t != 1:
        layers += [
            op("expand_conv", "conv2d", out_channels=hidden, kernel=1, bias=False),
            op("expand_bn", "batchnorm2d"),
            op("expand_relu", "relu6"),
        ]
    layers += [
        op("dw_conv", "conv2d", out_channels=hidden, kernel=3, stride=stride, padding=1,
           groups=hidden, bias=False),
        op("dw_bn", "batchnorm2d"),
        op("dw_relu", "relu6"),
        op("project_conv", "conv2d", out_channels=cout, kernel=1, bias=False),
        op("project_bn", "batchnorm2d"),
    ]
    return layers


def mobilenet_v2():
    # (expansion t, output channels c, repeats n, first stride s), as torchvision
    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
    features = [block("", [
        op("conv", "conv2d", out_channels=32, kernel=3, stride=2, padding=1, bias=False),
        op("bn", "batchnorm2d"),
        op("relu", "relu6"),
    ], repeat=1, first_index=0)]
    cin, index = 32, 1
    for t, c, n, s in settings:
        # first block of the stage: stride s and/or a channel change
        first_residual = (s == 1 and cin == c)
        features.append(block("", inverted_residual_layers(cin, c, s, t), repeat=1,
                              first_index=index,
                              shortcut="identity" if first_residual else None))
        index += 1
        cin = c
        if n > 1:  # n-1 identical stride-1 residual blocks
            features.append(block("", inverted_residual_layers(c, c, 1, t), repeat=n - 1,
                                  first_index=index, shortcut="identity"))
            index += n - 1
    features.append(block("", [
        op("conv", "conv2d", out_channels=1280, kernel=1, bias=False),
        op("bn", "batchnorm2d"),
        op("relu", "relu6"),
    ], repeat=1, first_index=index))
    assert index == 18
    layers = [
        block("features", features),
        op("avgpool", "adaptive_avgpool2d", output_size=1),
        op("flatten", "flatten"),
        block("classifier", [
            op("dropout", "dropout", p=0.2),
            op("fc", "linear", out_features=1000),
        ]),
        op("loss", "cross_entropy"),
    ]
    desc = ("MobileNetV2 (width 1.0) as torchvision.models.mobilenet_v2 (Sandler et al., "
            "'MobileNetV2: Inverted Residuals and Linear Bottlenecks', 2018): inverted "
            "residual blocks with depthwise convs and ReLU6, identity shortcut where stride is "
            "1 and channels match; 224x224 RGB input, 1000 classes, cross-entropy loss. "
            "3,504,872 parameters. features[i] follows torchvision's indices; within a block "
            "conv.0/conv.1/conv.2/conv.3 are written expand_*, dw_*, project_conv, project_bn.")
    return model("MobileNetV2", desc, [3, 224, 224], "float32", layers)


# ---------------------------------------------------------------------------
# ViT-B/16 (torchvision vit_b_16)
# ---------------------------------------------------------------------------
def vit_b_16():
    d, heads, mlp, n_layers = 768, 12, 3072, 12
    encoder_layer = [
        block("", [
            op("ln_1", "layernorm", eps=1e-6),
            op("self_attention", "attention", heads=heads, qkv="fused", bias=True,
               dropout=0.0, impl="eager"),
        ], shortcut="identity"),
        block("", [
            op("ln_2", "layernorm", eps=1e-6),
            block("mlp", [
                op("linear_1", "linear", out_features=mlp),
                op("gelu", "gelu"),
                op("linear_2", "linear", out_features=d),
            ]),
        ], shortcut="identity"),
    ]
    layers = [
        op("conv_proj", "conv2d", out_channels=d, kernel=16, stride=16),
        op("reshape", "reshape", shape=[d, 196]),
        op("permute", "permute", dims=[1, 0]),
        op("class_token", "class_token"),
        block("encoder", [
            op("pos_embedding", "learned_add"),
            block("layers", encoder_layer, repeat=n_layers),
            op("ln", "layernorm", eps=1e-6),
        ]),
        op("class_select", "select", dim=0, index=0),
        block("heads", [op("head", "linear", out_features=1000)]),
        op("loss", "cross_entropy"),
    ]
    desc = ("ViT-B/16 as torchvision.models.vit_b_16 (Dosovitskiy et al., 'An Image is Worth "
            "16x16 Words', 2020): 16x16 patch embedding by a strided conv, class token, learned "
            "position embedding, 12 pre-LayerNorm encoder blocks (12 heads, hidden 768, MLP "
            "3072, GELU), classification on the class token; 224x224 RGB input, 1000 classes, "
            "cross-entropy loss. 86,567,656 parameters. torchvision's dropouts are p=0 and "
            "omitted; encoder_layer_i is written layers[i].")
    return model("ViT-B/16", desc, [3, 224, 224], "float32", layers)


# ---------------------------------------------------------------------------
# BERT-base encoder, sequence classification (tools/reference_models.py)
# ---------------------------------------------------------------------------
def transformer_12():
    d, heads, inter, n_layers, p, eps = 768, 12, 3072, 12, 0.1, 1e-12
    embeddings = [
        op("word_embeddings", "embedding", num_embeddings=30522, embedding_dim=d),
        op("position_embeddings", "embedding", inputs=["@input"], num_embeddings=512,
           embedding_dim=d, indices="positions"),
        op("token_type_embeddings", "embedding", inputs=["@input"], num_embeddings=2,
           embedding_dim=d, indices="zeros"),
        op("add_token_type", "add", inputs=["word_embeddings", "token_type_embeddings"]),
        op("add_position", "add", inputs=["add_token_type", "position_embeddings"]),
        op("LayerNorm", "layernorm", eps=eps),
        op("dropout", "dropout", p=p),
    ]
    layer = [
        block("attention", [
            op("self", "attention", heads=heads, qkv="separate", bias=True, out_bias=True,
               dropout=p, impl="eager"),
            op("dropout", "dropout", p=p),
        ], shortcut="identity", after=[op("LayerNorm", "layernorm", eps=eps)]),
        block("ffn", [
            op("intermediate", "linear", out_features=inter),
            op("intermediate_act", "gelu"),
            op("output", "linear", out_features=d),
            op("dropout", "dropout", p=p),
        ], shortcut="identity", after=[op("LayerNorm", "layernorm", eps=eps)]),
    ]
    layers = [
        block("embeddings", embeddings),
        block("encoder", [block("layer", layer, repeat=n_layers)]),
        block("pooler", [
            op("first_token", "select", dim=0, index=0),
            op("dense", "linear", out_features=d),
            op("activation", "tanh"),
        ]),
        op("dropout", "dropout", p=p),
        op("classifier", "linear", out_features=2),
        op("loss", "cross_entropy"),
    ]
    desc = ("BERT-base encoder for sequence classification (Devlin et al., 'BERT: Pre-training "
            "of Deep Bidirectional Transformers', 2018; Hugging Face BertForSequenceClassification "
            "eager code, as tools/reference_models.py): 12 post-LayerNorm layers, hidden 768, "
            "12 heads, FFN 3072, GELU, dropout 0.1; word/position/token-type embeddings "
            "(vocabulary 30522, 512 positions, 2 types); pooler (first token, dense, tanh), "
            "2-class classifier, cross-entropy loss. Input: 128 token ids. 109,483,778 parameters.")
    return model("BERT-base (12-layer encoder)", desc, [128], "int64", layers)


# ---------------------------------------------------------------------------
# GPT-2 small (Hugging Face GPT2LMHeadModel eager code)
# ---------------------------------------------------------------------------
def gpt2_small():
    d, heads, n_pos, vocab, n_layers, p, eps = 768, 12, 1024, 50257, 12, 0.1, 1e-5
    h = [
        block("", [
            op("ln_1", "layernorm", eps=eps),
            op("attn", "attention", heads=heads, qkv="fused", bias=True, out_bias=True,
               dropout=p, causal=True, mask="buffer", max_positions=n_pos, impl="eager"),
            op("resid_dropout", "dropout", p=p),
        ], shortcut="identity"),
        block("", [
            op("ln_2", "layernorm", eps=eps),
            block("mlp", [
                op("c_fc", "linear", out_features=4 * d),
                op("act", "gelu", approximate="tanh"),
                op("c_proj", "linear", out_features=d),
                op("dropout", "dropout", p=p),
            ]),
        ], shortcut="identity"),
    ]
    layers = [
        op("wte", "embedding", num_embeddings=vocab, embedding_dim=d),
        op("wpe", "embedding", inputs=["@input"], num_embeddings=n_pos, embedding_dim=d,
           indices="positions"),
        op("add", "add", inputs=["wte", "wpe"]),
        op("drop", "dropout", p=p),
        block("h", h, repeat=n_layers),
        op("ln_f", "layernorm", eps=eps),
        op("lm_head", "linear", out_features=vocab, bias=False, tied_to="wte"),
        op("loss_upcast", "cast", dtype="float32"),  # ForCausalLMLoss: logits.float()
        op("loss", "cross_entropy"),
    ]
    desc = ("GPT-2 small (Radford et al., 'Language Models are Unsupervised Multitask "
            "Learners', 2019; Hugging Face GPT2LMHeadModel eager code, as "
            "tools/reference_models.py): 12 pre-LayerNorm decoder blocks, hidden 768, 12 heads, "
            "causal mask buffer of 1024x1024, MLP 3072 with tanh-GELU, dropout 0.1; LM head "
            "tied to the token embedding (adds no parameters); cross-entropy over every "
            "position. Input: 1024 token ids. 124,439,808 parameters.")
    return model("GPT-2 small", desc, [1024], "int64", layers)


# ---------------------------------------------------------------------------
# Llama 2 7B (Hugging Face LlamaForCausalLM)
# ---------------------------------------------------------------------------
def llama_2_7b():
    d, heads, inter, vocab, n_layers, eps = 4096, 32, 11008, 32000, 32, 1e-5
    layer = [
        block("", [
            op("input_layernorm", "rmsnorm", eps=eps),
            op("self_attn", "attention", heads=heads, kv_heads=heads, qkv="separate",
               bias=False, out_bias=False, causal=True, rope=True, max_positions=4096, impl="flash"),
        ], shortcut="identity"),
        block("", [
            op("post_attention_layernorm", "rmsnorm", eps=eps),
            block("mlp", [
                op("gate_proj", "linear", out_features=inter, bias=False),
                op("up_proj", "linear", inputs=["post_attention_layernorm"],
                   out_features=inter, bias=False),
                op("act_fn", "silu", inputs=["gate_proj"]),
                op("mul", "mul", inputs=["act_fn", "up_proj"]),
                op("down_proj", "linear", out_features=d, bias=False),
            ]),
        ], shortcut="identity"),
    ]
    layers = [
        op("embed_tokens", "embedding", num_embeddings=vocab, embedding_dim=d),
        block("layers", layer, repeat=n_layers),
        op("norm", "rmsnorm", eps=eps),
        op("lm_head", "linear", out_features=vocab, bias=False),
        op("loss_upcast", "cast", dtype="float32"),  # ForCausalLMLoss: logits.float()
        op("loss", "cross_entropy"),
    ]
    desc = ("Llama 2 7B (Touvron et al., 'Llama 2: Open Foundation and Fine-Tuned Chat Models', "
            "2023; Hugging Face LlamaForCausalLM, meta-llama/Llama-2-7b-hf config): 32 pre-RMSNorm "
            "decoder layers, hidden 4096, 32 heads (no GQA), rotary embeddings, no biases, "
            "SwiGLU MLP 11008, flash attention; untied 32000-token LM head; cross-entropy over "
            "every position. Input: 4096 token ids. 6,738,415,616 parameters. HF's 'model.' "
            "prefix is dropped from the paths.")
    return model("Llama 2 7B", desc, [4096], "int64", layers)


PRESETS = {
    "resnet50": (resnet50, 25_557_032),
    "vgg16": (vgg16, 138_357_544),
    "mobilenet_v2": (mobilenet_v2, 3_504_872),
    "vit_b_16": (vit_b_16, 86_567_656),
    "transformer-12": (transformer_12, 109_483_778),
    "gpt2-small": (gpt2_small, 124_439_808),
    "llama-2-7b": (llama_2_7b, 6_738_415_616),
}


def dump(obj):
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------------
# shape inference + parameter counter (pure Python, per docs/model-format.md)
# ---------------------------------------------------------------------------
class ModelError(Exception):
    pass


INT_DTYPES = ("int64", "int32", "uint8", "bool")


def _ints(v, rank):
    return list(v) if isinstance(v, list) else [v] * rank


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _broadcast(a, b, where):
    ra, rb = list(reversed(a)), list(reversed(b))
    out = []
    for i in range(max(len(ra), len(rb))):
        x = ra[i] if i < len(ra) else 1
        y = rb[i] if i < len(rb) else 1
        if x != y and 1 not in (x, y):
            raise ModelError(f"{where}: shapes {a} and {b} do not broadcast")
        out.append(max(x, y))
    return list(reversed(out))


def _dim(d, rank):
    return d + rank if d < 0 else d


class Counter:
    """Walks a model, inferring per-sample shapes and collecting parameter tensors.

    Each parameter tensor is recorded as (path, numel); a tensor of a repeated block
    is recorded once per repetition.  Shapes are (dims, dtype).
    """

    def __init__(self):
        self.tensors = []          # [(path, numel)]
        self.shapes = {}           # layer or block path -> per-sample output dims
        self.weights = {}          # path -> weight shape, for tied_to checks
        self.pending_ties = []     # (path, tied_to, expected weight shape)

    # -- helpers ---------------------------------------------------------
    def param(self, path, *shape):
        self.tensors.append((path, _numel(shape)))

    def run_model(self, m):
        shape = (list(m["input"]["shape"]), m["input"]["dtype"])
        out = self.run_layers(m["layers"], shape, [], "")
        for path, target, want in self.pending_ties:
            got = self.weights.get(target)
            if got is None:
                raise ModelError(f"{path}: tied_to {target!r} names no weight")
            if list(got) != list(want):
                raise ModelError(f"{path}: tied weight {target} is {got}, need {want}")
        return out

    @staticmethod
    def _join(prefix, name, index=None):
        p = prefix
        if name:
            p = f"{p}.{name}" if p else name
        if index is not None:
            p = f"{p}[{index}]"
        return p

    def _resolve(self, ref, scopes, block_input, prev, where):
        if ref == "@input":
            return block_input
        if ref == "@prev":
            return prev
        for scope in reversed(scopes):
            if ref in scope:
                return scope[ref]
        raise ModelError(f"{where}: unknown input {ref!r}")

    def run_layers(self, layers, block_input, outer_scopes, prefix):
        scope = {}
        scopes = outer_scopes + [scope]
        prev = block_input
        for layer in layers:
            name = layer["name"]
            if any(c in name for c in ".[]"):
                raise ModelError(f"{prefix}: bad name {name!r}")
            if name and name in scope:
                raise ModelError(f"{prefix}: duplicate name {name!r}")
            where = self._join(prefix, name) or "<root>"
            if "inputs" in layer:
                ins = [self._resolve(r, scopes, block_input, prev, where) for r in layer["inputs"]]
            else:
                ins = [prev]
            if "op" in layer:
                out = self.run_op(layer, ins, where)
            else:
                if len(ins) != 1:
                    raise ModelError(f"{where}: a block takes one input")
                out = self.run_block(layer, ins[0], scopes, prefix)
            if "op" in layer:
                self.shapes[where] = out[0]
            if name:
                scope[name] = out
            prev = out
        return prev

    def run_block(self, b, x, scopes, prefix):
        repeat = b.get("repeat", 1)
        first = b.get("first_index", None if repeat == 1 else 0)
        for r in range(repeat):
            index = None if first is None else first + r
            path = self._join(prefix, b["name"], index)
            out = self.run_layers(b["layers"], x, scopes, path)
            sc = b.get("shortcut")
            if sc is not None:
                s = x if sc == "identity" else self.run_layers(sc, x, scopes, path)
                if b.get("merge", "add") == "add":
                    if out[0] != s[0]:
                        raise ModelError(f"{path}: residual {out[0]} vs shortcut {s[0]}")
                else:
                    md = _dim(b.get("merge_dim", 0), len(out[0]))
                    dims = list(out[0])
                    dims[md] += s[0][md]
                    out = (dims, out[1])
            if "after" in b:
                out = self.run_layers(b["after"], out, scopes, path)
            if r + 1 < repeat and out != x:
                raise ModelError(f"{path}: repeated block changes shape {x[0]} -> {out[0]}")
            self.shapes[path] = out[0]
            x = out
        if b["name"]:
            self.shapes[self._join(prefix, b["name"])] = x[0]
        return x

    # -- ops -----------------------------------------------------------------
    def run_op(self, L, ins, path):
        o = L["op"]
        x, dt = ins[0]
        g = L.get
        if o in ("relu", "relu6", "hardswish", "silu", "leaky_relu", "gelu", "sigmoid", "tanh",
                 "softmax", "log_softmax", "dropout", "identity", "contiguous", "scale"):
            return (x, dt)
        if o in ("conv1d", "conv2d", "conv3d"):
            nd = int(o[4])
            if len(x) != nd + 1:
                raise ModelError(f"{path}: {o} needs [C,*{nd} spatial], got {x}")
            c, cout, groups = x[0], L["out_channels"], g("groups", 1)
            k = _ints(L["kernel"], nd)
            s = _ints(g("stride", 1), nd)
            dil = _ints(g("dilation", 1), nd)
            pad = g("padding", 0)
            sp = []
            for i in range(nd):
                if pad == "same":
                    sp.append(x[1 + i])
                    continue
                pi = _ints(pad, nd)[i]
                sp.append((x[1 + i] + 2 * pi - dil[i] * (k[i] - 1) - 1) // s[i] + 1)
            if c % groups or cout % groups:
                raise ModelError(f"{path}: groups {groups} do not divide {c}->{cout}")
            self.param(path + ".weight", cout, c // groups, *k)
            if g("bias", True):
                self.param(path + ".bias", cout)
            return ([cout] + sp, dt)
        if o in ("batchnorm1d", "batchnorm2d"):
            if g("affine", True):
                self.param(path + ".weight", x[0])
                self.param(path + ".bias", x[0])
            return (x, dt)
        if o == "groupnorm":
            if g("affine", True):
                self.param(path + ".weight", x[0])
                self.param(path + ".bias", x[0])
            return (x, dt)
        if o == "layernorm":
            nd = g("normalized_dims", 1)
            n = _numel(x[len(x) - nd:])
            if g("elementwise_affine", True):
                self.param(path + ".weight", n)
                if g("bias", True):
                    self.param(path + ".bias", n)
            return (x, dt)
        if o == "rmsnorm":
            self.param(path + ".weight", x[-1])
            return (x, dt)
        if o == "embedding":
            if dt not in INT_DTYPES:
                raise ModelError(f"{path}: embedding needs integer indices, got {dt}")
            n, dim = L["num_embeddings"], L["embedding_dim"]
            self.weights[path] = [n, dim]
            if "tied_to" in L:
                self.pending_ties.append((path, L["tied_to"], [n, dim]))
            else:
                self.param(path + ".weight", n, dim)
            return (x + [dim], "float32")
        if o == "linear":
            if dt in INT_DTYPES:
                raise ModelError(f"{path}: linear on integer input")
            fin, fout = x[-1], L["out_features"]
            self.weights[path] = [fout, fin]
            if "tied_to" in L:
                self.pending_ties.append((path, L["tied_to"], [fout, fin]))
            else:
                self.param(path + ".weight", fout, fin)
            if g("bias", True):
                self.param(path + ".bias", fout)
            return (x[:-1] + [fout], dt)
        if o == "attention":
            D = x[-1]
            heads = L["heads"]
            kvh = g("kv_heads", heads)
            hd = g("head_dim", D // heads)
            q, kv = heads * hd, kvh * hd
            bias = g("bias", True)
            if g("qkv", "separate") == "fused":
                self.param(path + ".qkv.weight", q + 2 * kv, D)
                if bias:
                    self.param(path + ".qkv.bias", q + 2 * kv)
            else:
                for nm, rows in (("q", q), ("k", kv), ("v", kv)):
                    self.param(f"{path}.{nm}.weight", rows, D)
                    if bias:
                        self.param(f"{path}.{nm}.bias", rows)
            self.param(path + ".out.weight", D, q)
            if g("out_bias", True):
                self.param(path + ".out.bias", D)
            return (x, dt)
        if o == "class_token":
            self.param(path, x[-1])
            return ([x[0] + 1] + x[1:], dt)
        if o == "learned_add":
            self.param(path, *x)
            return (x, dt)
        if o in ("maxpool2d", "avgpool2d"):
            k = _ints(L["kernel"], 2)
            s = _ints(g("stride", L["kernel"]), 2)
            p = _ints(g("padding", 0), 2)
            dil = _ints(g("dilation", 1), 2) if o == "maxpool2d" else [1, 1]
            rnd = math.ceil if g("ceil_mode", False) else math.floor
            sp = [int(rnd((x[1 + i] + 2 * p[i] - dil[i] * (k[i] - 1) - 1) / s[i])) + 1
                  for i in range(2)]
            return ([x[0]] + sp, dt)
        if o == "adaptive_avgpool2d":
            return ([x[0]] + _ints(L["output_size"], 2), dt)
        if o == "flatten":
            a = _dim(g("start_dim", 0), len(x))
            b = _dim(g("end_dim", -1), len(x))
            return (x[:a] + [_numel(x[a:b + 1])] + x[b + 1:], dt)
        if o == "reshape":
            shape = list(L["shape"])
            if -1 in shape:
                rest = _numel([s for s in shape if s != -1])
                shape[shape.index(-1)] = _numel(x) // rest
            if _numel(shape) != _numel(x):
                raise ModelError(f"{path}: reshape {x} -> {L['shape']}")
            return (shape, dt)
        if o == "permute":
            dims = L["dims"]
            if sorted(dims) != list(range(len(x))):
                raise ModelError(f"{path}: permute dims {dims} for {x}")
            return ([x[d] for d in dims], dt)
        if o == "transpose":
            y = list(x)
            a, b = _dim(L["dim0"], len(x)), _dim(L["dim1"], len(x))
            y[a], y[b] = y[b], y[a]
            return (y, dt)
        if o == "select":
            d = _dim(L["dim"], len(x))
            return (x[:d] + x[d + 1:], dt)
        if o == "slice":
            d = _dim(L["dim"], len(x))
            start, end, step = g("start", 0), min(g("end", x[d]), x[d]), g("step", 1)
            y = list(x)
            y[d] = max(0, (end - start + step - 1) // step)
            return (y, dt)
        if o in ("add", "mul", "matmul", "concat"):
            if len(ins) < 2:
                raise ModelError(f"{path}: {o} needs explicit inputs")
            if o in ("add", "mul"):
                return (_broadcast(ins[0][0], ins[1][0], path), dt)
            if o == "matmul":
                a, b = ins[0][0], ins[1][0]
                if a[-1] != b[-2]:
                    raise ModelError(f"{path}: matmul {a} @ {b}")
                return (_broadcast(a[:-2], b[:-2], path) + [a[-2], b[-1]], dt)
            d = _dim(g("dim", 0), len(x))
            y = list(x)
            y[d] = sum(s[0][d] for s in ins)
            return (y, dt)
        if o == "cast":
            return (list(x), g("dtype", dt))
        if o == "cross_entropy":
            if len(x) not in (1, 2):
                raise ModelError(f"{path}: cross_entropy logits must be [C] or [S,C], got {x}")
            return ([], "float32")
        if o == "mse_loss":
            return ([], "float32")
        if o == "opaque":
            self.param(path, L["params"])
            return (list(L["output_shape"]), g("output_dtype", "float32"))
        raise ModelError(f"{path}: unknown op {o!r}")


def count(m):
    c = Counter()
    out = c.run_model(m)
    return c, out


# ---------------------------------------------------------------------------
# torch cross-check
# ---------------------------------------------------------------------------
def torch_reference(preset_id):
    """(sorted parameter-tensor sizes, {module path: per-sample output dims}) of the torch
    reference model, or None where torch or a reference is not available."""
    try:
        import torch
    except ImportError:
        return None
    torch.manual_seed(0)
    torch.set_num_threads(1)  # the check shares small machines; avoid oversubscription
    if preset_id in ("resnet50", "vgg16", "mobilenet_v2", "vit_b_16"):
        import torchvision.models as tvm
        m = getattr(tvm, preset_id)(weights=None, num_classes=1000)
        inputs = (torch.randn(1, 3, 224, 224),)
    elif preset_id in ("transformer-12", "gpt2-small"):
        sys.path.insert(0, HERE)
        import reference_models
        ref = reference_models.build(preset_id)
        m = ref.model
        inputs, _ = ref.make_batch(1)
    else:
        return None
    sizes = sorted(p.numel() for p in m.parameters())  # parameters() skips tied duplicates
    shapes = {}

    def hook(name):
        def f(mod, inp, out):
            if isinstance(out, torch.Tensor):
                shapes[name] = list(out.shape[1:])  # per sample
        return f

    handles = [mod.register_forward_hook(hook(n)) for n, mod in m.named_modules() if n]
    m.eval()
    with torch.no_grad():
        m(*inputs)
    for h in handles:
        h.remove()
    return sizes, shapes


def compare_shapes(mine, theirs):
    """Compare output shapes on the paths both sides name alike (a[1].b <-> a.1.b).
    Returns (matched, mismatches)."""
    import re
    norm = {re.sub(r"\[(\d+)\]", r".\1", k): v for k, v in mine.items()}
    matched, bad = 0, []
    for path, shape in theirs.items():
        if path in norm:
            if norm[path] == shape:
                matched += 1
            else:
                bad.append(f"{path}: {norm[path]} here, {shape} in torch")
    return matched, bad


# ---------------------------------------------------------------------------
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="check the presets (files, shapes, parameter counts, torch), write nothing")
    ap.add_argument("--no-torch", action="store_true",
                    help="with --check: skip the torch cross-check (it runs the models on the CPU)")
    ap.add_argument("--out", default=PRESET_DIR, help="output folder (default resources/presets)")
    args = ap.parse_args(argv)

    validator = None
    if args.check:
        try:
            from jsonschema import Draft202012Validator
            with open(os.path.join(ROOT, "resources", "model.schema.json"), encoding="utf-8") as f:
                schema = json.load(f)
            Draft202012Validator.check_schema(schema)
            validator = Draft202012Validator(schema)
        except ImportError:
            print("note: jsonschema not importable - schema validation skipped")

    ok = True
    for pid, (fn, expected) in PRESETS.items():
        m = fn()
        text = dump(m)
        path = os.path.join(args.out, pid + ".json")
        if not args.check:
            os.makedirs(args.out, exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            print(f"wrote {os.path.relpath(path, ROOT)}")
            continue
        problems = []
        try:
            with open(path, encoding="utf-8") as f:
                if f.read() != text:
                    problems.append(f"{path} differs from the generator (run without --check)")
        except FileNotFoundError:
            problems.append(f"{path} missing (run without --check)")
        if validator is not None:
            for e in validator.iter_errors(m):
                path_s = "/".join(str(x) for x in e.absolute_path)
                problems.append(f"schema: at /{path_s}: {e.message}")
        try:
            c, out = count(m)
            n = sum(s for _, s in c.tensors)
            if n != expected:
                problems.append(f"parameter count {n:,} != expected {expected:,}")
            if out[0] != []:
                problems.append(f"model output {out[0]} is not a scalar loss")
            ref = None if args.no_torch else torch_reference(pid)
            if ref is None:
                torch_note = "torch check skipped" if args.no_torch else "no torch reference"
            else:
                ref_sizes, ref_shapes = ref
                mine = sorted(s for _, s in c.tensors)
                if mine != ref_sizes:
                    problems.append(f"parameter tensors differ from torch: {len(mine)} tensors / "
                                    f"{sum(mine):,} here, {len(ref_sizes)} / {sum(ref_sizes):,} "
                                    "in torch")
                matched, bad = compare_shapes(c.shapes, ref_shapes)
                problems += [f"output shape differs: {b}" for b in bad]
                torch_note = (f"torch: same {len(ref_sizes)} parameter-tensor sizes, "
                              f"{matched} module output shapes match")
        except ModelError as e:
            problems.append(str(e))
            n, torch_note = -1, ""
        if problems:
            ok = False
            for p in problems:
                print(f"FAIL {pid}: {p}")
        else:
            print(f"ok   {pid}: {n:,} parameters ({torch_note})")
    if args.check and not args.no_torch:
        try:
            import torch  # noqa: F401
        except ImportError:
            print("note: torch not importable by", sys.executable,
                  "- torch cross-checks skipped (use /usr/bin/python3)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
