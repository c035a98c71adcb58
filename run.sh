#!/usr/bin/env bash
# Installs what is missing, builds, and starts BatchFit with the ResNet-50 preset loaded.
# Extra arguments go to the app, e.g. ./run.sh --preset gpt2-small --gpu rtx-4090
set -euo pipefail
cd "$(dirname "$0")"
scripts/deps.sh build
# The app only: the tests are ./test.sh's (their packages come with scripts/deps.sh test).
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBATCHFIT_BUILD_TESTS=OFF >/dev/null
cmake --build build
if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -z "${QT_QPA_PLATFORM:-}" ]; then
  echo "No display found: showing the command-line estimate instead (set DISPLAY to open the window)."
  exec build/app/batchfit-cli estimate --preset resnet50 --batch 64 --gpu rtx-4090 "$@"
fi
exec build/app/batchfit --preset resnet50 "$@"
