#!/bin/bash
# The exporter quick set and the torch smoke test under PyTorch 2.6 (Debian 13), in a trixie root made with
# ../shared/tools/debian-root.sh (fresh trixie DIR, then torch DIR). The CLI is built inside the root (build-trixie/),
# so it links that release's libraries.
#   tests/torch/torch2_quick.sh ROOT [DEBIAN_ROOT_SH]
set -euo pipefail
root=${1:?usage: tests/torch/torch2_quick.sh ROOT [path/to/debian-root.sh]}
tool=${2:-$(dirname "$0")/../../../shared/tools/debian-root.sh}
src=$(cd "$(dirname "$0")/../.." && pwd)
exec bash "$tool" run "$root" -b "$src:/src" -- 'cd /src && bash scripts/deps.sh test >/dev/null &&
  cmake -S . -B build-trixie -G Ninja >/dev/null && cmake --build build-trixie --target batchfit-cli &&
  cd build-trixie && python3 ../tests/torch/test_export.py app/batchfit-cli .. --quick --threads 2 &&
  python3 ../tests/torch/smoke.py app/batchfit-cli ..'
