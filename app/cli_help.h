#pragma once
// The CLI's --help text: this head, the training set-up from the settings table (settingsHelp()), then the
// output options. packaging/GenManPage.cmake makes the man page from what `batchfit-cli --help` prints.
#include "batchfit/settings.h"

#include <string>

namespace batchfit {

inline constexpr const char* kCliHelpHead = R"(Usage: batchfit-cli COMMAND [OPTIONS]

Estimates the GPU memory of one training step and the largest batch size that fits; `serve` answers the
same for inference.

Commands:
  estimate     peak memory at --batch, its components, where the peak happens, top layers
  check-fit    a CI guard: one line, "fits" or "out of memory", for --batch on --gpu; exit 0 when it fits, 1
               when it does not, 2 for anything else (a usage error or bad input)
  max-batch    the largest batch (and multiple of 8) that fits --gpu
  sweep        peak memory over a range of batch sizes
  fit-map      for a token-sequence model (--hf-config, an LLM preset): the largest micro-batch that fits
               --gpu at each sequence length of --seq-from..--seq-to, and the tokens per optimizer step
  serve        serving a decoder (--hf-config): the KV cache vLLM, SGLang or HF generate() would have on
               --gpu, as they print it (GPU KV cache size, maximum concurrency), the sequences of --seq
               tokens that fit at once and the longest context for --batch sequences (docs/serving.md)
  presets      list the built-in models
  gpus         list the GPU catalogue; with --fit and a model: the largest batch on each GPU (least
               memory first) and the smallest GPU that fits --batch (default 1)
  check        validate a model file (structure, ops, shapes) and summarise it
  report       write a PNG or PDF report (--out FILE.pdf|FILE.png; needs the Qt build)
  allocator-replay TRACE  replay an allocator trace (docs/allocator-trace.md: estimate --trace-out, or
               tools/snapshot_to_trace.py from a torch.cuda.memory snapshot) through the caching-allocator
               model: peak allocated and reserved, segments, the first OOM against --capacity, and how
               they compare with what the snapshot recorded

Model:
  --preset NAME          a built-in model (see `presets`)
  --model FILE           a BatchFit model file (JSON, docs/model-format.md); a file saved with its training
                         set-up (GPU, batch, optimizer, ...) uses it, and the options given override it
  --hf-config FILE|ID    a Hugging Face config.json, or a model id (ORG/NAME) found in the local Hugging Face
                         cache ($HF_HUB_CACHE, $HF_HOME/hub or ~/.cache/huggingface/hub; never downloaded)
                         (gpt2, bert, roberta, llama, mistral, qwen2, qwen3, gemma, gemma2, gemma3_text,
                         phi3 (also phi-4), gpt_neox, the mixtures of experts mixtral, qwen2_moe,
                         qwen3_moe, deepseek_v2, deepseek_v3 (DeepSeek-V2/V3/R1: latent attention), and vit, whose input
                         is an image of its image_size); with --seq N
                         (default: the config's maximum), --moe-impl grouped_mm|loop (the experts as
                         transformers 5 runs them, every routed row at once, or one at a time as 4.x did),
                         --moe-load balanced|worst (with loop, tokens per expert: top_k/experts of them, or
                         all on top_k experts) and --attention
                         flash|mem_efficient|eager|math (default flash: SDPA, what transformers runs on torch
                         2: the flash kernel on sm_80+ and MI200/MI300 in half precision where q, k and v
                         have one head size, else memory-efficient; eager for Gemma 2, which has no SDPA,
                         old transformers, torch 1.13 or output_attentions; math: SDPA's fallback, as a CPU
                         runs DeepSeek's attention)
  --onnx FILE            an ONNX model (needs a build with libonnx-dev); the batch is dim 0 of its input;
                         with --onnx-loss cross-entropy|mse|none (default cross-entropy) and
                         --onnx-allow-opaque (unmapped operators become opaque layers)
)";

inline constexpr const char* kCliHelpTail = R"(Output:
  --json                 machine-readable output (docs/estimate-fields.md)
  --top N                layers shown by activation memory (default 10)
  --timeline             include the step timeline (estimate --json)
  --from N --to N        sweep range (default 1..1024)
  --step N --log         sweep step; with --log, multiply by N (default: powers of 2)
  --seq-from N --seq-to N  fit-map sequence lengths (default: 128 up to the model's maximum positions, or 4x
                         its length); --hf-config models are imported again at each length
  --seq-step N           fit-map: add N (default: double, at most 64 lengths, up to 16777216)
  --trace-out FILE       estimate: write the step's allocations and frees as an allocator trace
  --save FILE            estimate: write the model with this set-up (with --gpu: GPU, batch, every setting) as
                         a model file; `batchfit --model FILE` opens it in the desktop app
  --capacity SIZE        allocator-replay: the GPU's memory (24GiB, 512MiB or bytes; default: the trace's
                         device_total_bytes); --context-mib N is taken off it
  --memory-fraction F    allocator-replay: torch.cuda.set_per_process_memory_fraction(F) (what makes
                         garbage_collection_threshold act)
  --out FILE             report output file
  --measured FILE        estimate, report: measured points from tools/torch_measure.py, shown next to
                         the estimate (text, --json "measured", crosses on the report's chart)
  --lang en|zh_CN        report language
  --version              print the version
  --help                 print this help

Exit codes:
  0  success (estimate/check/check-fit with --gpu: it fits)
  1  it does not fit the GPU (estimate and check-fit with --gpu; max-batch when not even batch 1 fits; fit-map when
     batch 1 fits at none of the lengths; serve when the engine would not start or --batch sequences of
     --seq tokens do not fit)
  2  usage error (unknown command or option, bad value)
  3  bad input: the model file or preset cannot be loaded, validated or estimated
  4  the report could not be written
  check-fit exits 2 where the others exit 2, 3 or 4: a guard tells "fits", "does not fit" and "cannot say"
)";

/// The whole --help text.
inline std::string cliHelp() {
    return std::string(kCliHelpHead) + "\n" + settingsHelp() + "\n" + kCliHelpTail;
}

} // namespace batchfit
