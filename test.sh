#!/usr/bin/env bash
# Installs what is missing, builds everything (tests and benchmarks included) and runs every test (build-test/).
# Then builds the core, the CLI and their tests with AddressSanitizer + UndefinedBehaviorSanitizer
# (build-test-asan/) and runs those: the core tests (fuzz regressions included) and the CLI tests.
#
#   ./test.sh [ctest options...]      extra options go to both ctest runs, e.g. ./test.sh -R hf
#   BATCHFIT_SKIP_SANITIZE=1 ./test.sh  skips the sanitizer stage (quick local runs; CI always runs it)
set -euo pipefail
cd "$(dirname "$0")"
scripts/deps.sh test
# Everything is built: the UI (configuring fails without Qt), ONNX import, the benchmarks (where speed targets live).
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBATCHFIT_WERROR=ON \
      -DBATCHFIT_BUILD_UI=ON -DBATCHFIT_WITH_ONNX=ON -DBATCHFIT_BUILD_BENCH=ON >/dev/null
cmake --build build-test
tests/count_check.sh build-test
(cd build-test && QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 900 "$@")

if [ "${BATCHFIT_SKIP_SANITIZE:-0}" = 1 ]; then
  echo "BATCHFIT_SKIP_SANITIZE=1: skipping the AddressSanitizer + UBSan stage"
  exit 0
fi
echo "== AddressSanitizer + UndefinedBehaviorSanitizer: core and CLI tests (build-test-asan)"
# Warnings are the first build's job (-Werror there): GCC 12 with -fsanitize=address warns
# -Wmaybe-uninitialized falsely on copies of std::optional<std::string>, so no -Werror here.
# -O1 without debug info: about a third less compile time than -O2 -g, the tests still run in seconds.
cmake -S . -B build-test-asan -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS=-O1 -DBATCHFIT_WERROR=OFF \
      -DBATCHFIT_SANITIZE=ON -DBATCHFIT_BUILD_UI=OFF -DBATCHFIT_BUILD_BENCH=OFF >/dev/null
cmake --build build-test-asan --target batchfit_core_tests batchfit-cli
cd build-test-asan
# A report is a failure: UBSan aborts (-fno-sanitize-recover), ASan (leaks included) exits non-zero.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
  ctest --output-on-failure --timeout 1800 -R '^(core|cli):' "$@"
