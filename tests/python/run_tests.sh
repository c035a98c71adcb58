#!/usr/bin/env bash
# Runs the batchfit package's tests against a build tree:
#   run_tests.sh BUILD SOURCE fresh-venv PYTHON MODULE...  in a fresh virtual environment made by PYTHON (Debian's
#                                                          /usr/bin/python3: --system-site-packages sees its torch)
#   run_tests.sh BUILD SOURCE as-is PYTHON MODULE...       with PYTHON itself (an existing environment, e.g. the
#                                                          measurement venv with the newest torch and transformers)
# The package is the build's staged one (BUILD/python). In a sanitized build (./test.sh) the extension carries
# AddressSanitizer, which must be loaded first: it is preloaded, with leak checks off (CPython keeps its objects).
# Exit 77 (skipped) when PYTHON is missing or cannot make a venv.
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd) mode=$3 python=$4
shift 4
if [ -z "$python" ] || ! "$python" -c "import sys" 2>/dev/null; then
  echo "SKIPPED: no Python interpreter '$python' (set BATCHFIT_VENV_PYTHON for the integration tests)"; exit 77
fi
so=$(ls "$build"/python/batchfit/_batchfit*.so 2>/dev/null | head -1)
[ -n "$so" ] || { echo "no $build/python/batchfit/_batchfit*.so: the Python package was not built" >&2; exit 1; }
if [ "$mode" = fresh-venv ]; then
  venv="$build/python-test-venv"
  rm -rf "$venv"
  if ! "$python" -m venv --system-site-packages --without-pip "$venv" 2>/dev/null; then
    echo "SKIPPED: $python cannot make a virtual environment (python3-venv)"; exit 77
  fi
  python="$venv/bin/python"
fi
# (ldd's output taken whole: `ldd | grep -q` can fail under pipefail when grep stops reading early)
if [[ "$(ldd "$so")" == *libasan* ]]; then
  export LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
  export ASAN_OPTIONS=detect_leaks=0:alloc_dealloc_mismatch=0:detect_odr_violation=0
fi
export PYTHONPATH="$build/python" BATCHFIT_SOURCE="$src" BATCHFIT_CLI="$build/app/batchfit-cli"
[ -x "$build/app/batchfit" ] && export BATCHFIT_GUI_EXE="$build/app/batchfit"
cd "$src/tests/python"
exec "$python" -W error::ResourceWarning -m unittest -v "$@"
