#!/usr/bin/env bash
# Installs what is missing, builds everything (the app, the tests, the benchmarks) and runs every test, the UI's
# included, under AddressSanitizer + UndefinedBehaviorSanitizer, in one build (build-test/): -O1, warnings as
# errors. A sanitizer report is a failure.
#
#   ./test.sh [ctest options...]        extra options go to ctest, e.g. ./test.sh -R hf
#   BATCHFIT_SKIP_SANITIZE=1 ./test.sh  quick local runs: an optimized build without sanitizers (build-test-fast/)
#
# One sanitized build instead of an optimized one plus a sanitized one: it is what keeps CI (.ci/run) within
# its time on two cores with the UI under the sanitizers too (tests/packaging/ times it). GCC 12 with
# -fsanitize=address warns -Wmaybe-uninitialized falsely on copies of std::optional<std::string>: that one
# warning is off here; the fast build keeps it.
set -euo pipefail
cd "$(dirname "$0")"
scripts/deps.sh test
common=(-G Ninja -DBATCHFIT_WERROR=ON -DBATCHFIT_BUILD_UI=ON -DBATCHFIT_WITH_ONNX=ON -DBATCHFIT_BUILD_BENCH=ON)
if [ "${BATCHFIT_SKIP_SANITIZE:-0}" = 1 ]; then
  echo "BATCHFIT_SKIP_SANITIZE=1: an optimized build without the sanitizers (build-test-fast)"
  build=build-test-fast
  cmake -S . -B $build "${common[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBATCHFIT_SANITIZE=OFF >/dev/null
else
  build=build-test
  cmake -S . -B $build "${common[@]}" -DCMAKE_BUILD_TYPE=None "-DCMAKE_CXX_FLAGS=-O1 -Wno-maybe-uninitialized" \
        -DBATCHFIT_SANITIZE=ON >/dev/null
fi
cmake --build $build
tests/count_check.sh $build
cd $build
# Tests in parallel, one per core (the whole suite under the sanitizers: about 5 minutes on two cores).
export CTEST_PARALLEL_LEVEL=${CTEST_PARALLEL_LEVEL:-$(nproc)}
# UBSan aborts (-fno-sanitize-recover); ASan, leaks included, exits non-zero. fontconfig's cache is the one leak
# suppressed (tests/lsan.supp: Qt never calls FcFini).
QT_QPA_PLATFORM=offscreen \
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/../tests/lsan.supp} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
  ctest --output-on-failure --timeout 1800 "$@"
