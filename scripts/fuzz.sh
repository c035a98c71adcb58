#!/usr/bin/env bash
# Runs the libFuzzer targets for a fixed time each (issue 7).
#
#   scripts/fuzz.sh TARGET|all SECONDS [libFuzzer options...]
#   TARGET: model_loader, hf_import, hf_parse, estimate, setup, trace, measurement, serving, onnx_import,
#   onnx_parse (see fuzz/CMakeLists.txt)
#
# Builds build-fuzz (clang, -DBATCHFIT_FUZZ=ON) if the target is missing. Per target, under $BUILD_DIR:
#   fuzz-corpus/<t>     the working corpus, kept between runs
#   fuzz-seeds/<t>      seeds rebuilt each run from resources/presets, tests/data/{models,hf} and the
#                       regression inputs in tests/data/fuzz/<t>
#   fuzz-artifacts/<t>  crash-*, timeout-*, oom-*, slow-unit-* found by this run
#   fuzz-logs/<t>.log   libFuzzer's output, with the final stats (number_of_executed_units, average_exec_per_sec)
# Every input that makes the fuzzer fail is a bug: fix it, then copy it to tests/data/fuzz/<t>/crash-<what>
# so tests/core/test_fuzz_regressions.cpp replays it.
#
# Environment: BUILD_DIR (default build-fuzz), NICE (default 19), FUZZ_KEEP_GOING=1 to go on after a crash
# (libFuzzer fork mode, one worker). Exit status: 0 when no target found anything, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
all_targets=(model_loader hf_import hf_parse estimate setup trace measurement serving)
[ -f core/include/batchfit/onnx_import.h ] && all_targets+=(onnx_import onnx_parse)

if [ $# -lt 2 ]; then
  echo "usage: $0 TARGET|all SECONDS [libFuzzer options...]   (targets: ${all_targets[*]})" >&2
  exit 2
fi
what=$1
seconds=$2
shift 2
if [ "$what" = all ]; then targets=("${all_targets[@]}"); else targets=("$what"); fi
for t in "${targets[@]}"; do
  case " ${all_targets[*]} " in *" $t "*) ;; *) echo "unknown target '$t' (known: ${all_targets[*]})" >&2; exit 2;; esac
done

build=${BUILD_DIR:-build-fuzz}
nice_level=${NICE:-19}
need_build=0
for t in "${targets[@]}"; do [ -x "$build/fuzz/fuzz_$t" ] || need_build=1; done
if [ $need_build = 1 ]; then
  if [ ! -f "$build/CMakeCache.txt" ]; then
    CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DBATCHFIT_FUZZ=ON -DBATCHFIT_BUILD_UI=OFF \
      -DBATCHFIT_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  fi
  nice -n "$nice_level" cmake --build "$build" --target batchfit_fuzzers -j "${JOBS:-2}"
fi

# Seeds: model files as they are; for the estimate target, each model behind a few set-up headers
# (fuzz_entries.h: 6 bytes: optimizer/impl, precision/checkpointing, flags, batch, large batch, capacity).
make_seeds() {
  local t=$1 dir=$2
  rm -rf "$dir"
  mkdir -p "$dir"
  local models=("$root"/resources/presets/*.json "$root"/tests/data/models/*.json)
  case $t in
    model_loader)
      cp "${models[@]}" "$dir"/
      ;;
    hf_import | hf_parse)
      cp "$root"/tests/data/hf/*.json "$dir"/
      ;;
    onnx_import | onnx_parse)
      cp "$root"/tests/data/onnx/*.onnx "$dir"/
      ;;
    setup)
      # a setting's selector byte then a value, and model files with a training section
      local i=0 v
      for v in 64 0 -3 5% 0.6 1536 24GiB 1B q_proj,v_proj adamw every-k on off 1e300 expandable_segments:True; do
        printf "\\x$(printf %02x $((i * 7 % 256)))%s" "$v" >"$dir/value-$i"
        i=$((i + 1))
      done
      cp "$root"/tests/data/models/*setup*.json "$dir"/ 2>/dev/null || true
      ;;
    trace)
      cp "$root"/tests/data/allocator/*.json "$dir"/ 2>/dev/null || true
      ;;
    measurement)
      cp "$root"/tests/data/measured/*.json "$dir"/ 2>/dev/null || true
      ;;
    serving)
      cp "$root"/tests/data/hf/*.json "$dir"/
      local f
      for f in "$root"/tests/data/serving/configs/*.json; do cp "$f" "$dir/serving-$(basename "$f")"; done
      ;;
    estimate)
      local headers=('\x03\x00\x00\x07\x05\x40' '\x04\x0f\x49\x10\x1f\x00' '\x00\x16\x28\x3f\xff\xc0'
                     '\x22\x1d\x83\x01\x0a\x35' '\x09\x05\x70\x20\x64\x80')
      local i m
      for m in "${models[@]}"; do
        i=0
        for h in "${headers[@]}"; do
          { printf "$h"; cat "$m"; } >"$dir/$(basename "$m" .json)-$i"
          i=$((i + 1))
        done
      done
      ;;
  esac
  if [ -d "$root/tests/data/fuzz/$t" ]; then
    find "$root/tests/data/fuzz/$t" -maxdepth 1 -type f ! -name '*.md' -exec cp {} "$dir"/ \;
  fi
}

status=0
for t in "${targets[@]}"; do
  corpus=$build/fuzz-corpus/$t
  seeds=$build/fuzz-seeds/$t
  artifacts=$build/fuzz-artifacts/$t
  log=$build/fuzz-logs/$t.log
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  make_seeds "$t" "$seeds"
  dict=(-dict=fuzz/model.dict)
  max_len=32768
  case $t in
    hf_import | hf_parse) dict=(-dict=fuzz/hf_import.dict); max_len=4096 ;;
    onnx_import | onnx_parse) dict=(); max_len=16384 ;;
  esac
  opts=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=$max_len "${dict[@]}"
        -report_slow_units=2 -print_final_stats=1 -artifact_prefix="$artifacts/")
  if [ "${FUZZ_KEEP_GOING:-0}" = 1 ]; then
    opts+=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  fi
  echo "== $t: ${seconds}s (log: $log)"
  rc=0
  # UBSan reports abort (-fno-sanitize-recover); ASan leaks are not what we are after here.
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
    nice -n "$nice_level" "$build/fuzz/fuzz_$t" "${opts[@]}" "$@" "$corpus" "$seeds" >"$log" 2>&1 || rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
  if [ -z "$execs" ]; then  # fork mode: the parent's last "#N: cov: ... exec/s: R ..." line
    last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1 || true)
    execs=$(echo "$last" | sed -n 's/^#\([0-9]*\):.*/\1/p')
    # The parent's "exec/s N" is the last job's rate: average over the whole run instead.
    secs=$(echo "$last" | sed -n 's/.* time: \([0-9]*\)s.*/\1/p')
    rate=
    [ -n "$execs" ] && [ -n "$secs" ] && [ "$secs" -gt 0 ] && rate=$((execs / secs))
  fi
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
  found=$(find "$artifacts" -type f -newer "$seeds" 2>/dev/null | sort || true)
  echo "   executions: ${execs:-?}  exec/s: ${rate:-?}  ${cov:-}  corpus: $(find "$corpus" -type f | wc -l) inputs  exit: $rc"
  if grep -q 'Slow unit' "$log"; then
    echo "   slow units reported:"; grep -A1 'Slow unit' "$log" | grep -o 'slow-unit-[0-9a-f]*' | sort -u | sed 's/^/     /'
  fi
  if [ $rc -ne 0 ] || [ -n "$found" ]; then
    status=1
    echo "   FOUND (see $log):"
    # Slow units and timeouts are wall-clock: re-run each alone and show its CPU time (load or a real hang?).
    for f in $found; do
      case $(basename "$f") in
        slow-unit-*|timeout-*)
          cpu=$( { TIMEFORMAT='%U s user, %R s wall'; time timeout 60 "$build/fuzz/fuzz_$t" "$f" >/dev/null 2>&1; } 2>&1 || true)
          echo "     $f   (alone: $cpu)" ;;
        *) echo "     $f" ;;
      esac
    done
    grep -m3 -E 'ERROR: |runtime error|property violated|ALARM|out-of-memory' "$log" | sed 's/^/     /' || true
  fi
done
exit $status
