#!/usr/bin/env bash
# Installs what is missing, builds everything (tests and benchmarks included) and runs every test.
set -euo pipefail
cd "$(dirname "$0")"
scripts/deps.sh test
bench=OFF
[ -f /usr/include/benchmark/benchmark.h ] && bench=ON
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBATCHFIT_WERROR=ON \
      -DBATCHFIT_BUILD_BENCH=$bench >/dev/null
cmake --build build-test
cd build-test
QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 900 "$@"
