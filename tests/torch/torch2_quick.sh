#!/bin/bash
# The exporter quick set and the torch smoke test under PyTorch 2.6 (Debian 13), in a trixie root made with
# scripts/torch2-root.sh ROOT. The CLI is built inside the root (build-trixie/), so it links that release's libraries
# (a CLI built here links Debian 12's libonnx, which trixie does not ship). ctest runs this as "torch 2: ..." when
# BATCHFIT_TORCH2_ROOT names such a root, and reports it skipped otherwise.
#   tests/torch/torch2_quick.sh ROOT
set -euo pipefail
root=${1:?usage: tests/torch/torch2_quick.sh ROOT}
src=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "SKIPPED: needs root (chroot into $root)"; exit 77; }
[ -x "$root/usr/bin/python3" ] || { echo "SKIPPED: $root has no python3 (make it: scripts/torch2-root.sh $root)"; exit 77; }
exec bash "$src/scripts/in-root.sh" "$root" -b "$src:/src" -- 'cd /src && bash scripts/deps.sh test >/dev/null &&
  cmake -S . -B build-trixie -G Ninja >/dev/null && cmake --build build-trixie --target batchfit-cli &&
  cd build-trixie && python3 ../tests/torch/test_export.py app/batchfit-cli .. --quick --threads 2 &&
  python3 ../tests/torch/smoke.py app/batchfit-cli .. &&
  python3 ../tests/torch/checkpoint_peak.py app/batchfit-cli ..'
