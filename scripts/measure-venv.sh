#!/bin/sh
# Makes the measurement environment (issue 28): a virtual environment with the newest torch and the libraries
# users run, at the versions pinned in tools/requirements-measure.txt.
#   scripts/measure-venv.sh [DIR]        (default: .venv-measure; about 6 GB)
# Then run the tools with DIR/bin/python, e.g. DIR/bin/python tools/trace_vs_profiler.py measure ...
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/.venv-measure}
python3 -m venv "$dir"
"$dir/bin/pip" install --upgrade pip
DS_BUILD_OPS=0 "$dir/bin/pip" install -r "$root/tools/requirements-measure.txt"
"$dir/bin/python" -c "import torch, transformers, peft; print('torch', torch.__version__, '| transformers', transformers.__version__, '| peft', peft.__version__)"
