#!/usr/bin/env bash
# `pip install .` from a copy of the clone into a fresh virtual environment (over Debian's Python and torch), then
# the package's tests against that installed package. Needs PyPI (scikit-build-core and pybind11 are the build's
# requirements), so ctest runs it only with BATCHFIT_PIP_CHECK=1; a few minutes (the core is compiled again).
#   pip_install_check.sh SOURCE CLI [PYTHON]
set -euo pipefail
src=$(cd "$1" && pwd) cli=$(readlink -f "$2") python=${3:-/usr/bin/python3}
if [ "${BATCHFIT_PIP_CHECK:-0}" != 1 ]; then echo "SKIPPED: set BATCHFIT_PIP_CHECK=1 (needs PyPI)"; exit 77; fi
work=$(mktemp -d /tmp/batchfit-pip-XXXXXX)
trap 'rm -rf "$work"' EXIT
git -C "$src" ls-files -z --cached --others --exclude-standard | (cd "$src" && tar --null -T - -cf -) | (mkdir "$work/src" && tar -xf - -C "$work/src")
"$python" -m venv --system-site-packages "$work/venv"
start=$(date +%s)
CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$work/venv/bin/pip" install -q "$work/src"
echo "pip install . took $(( $(date +%s) - start )) s"
# the installed package, not the clone's python/ folder
cd "$work" && "$work/venv/bin/python" -c "import batchfit, batchfit._batchfit as n; print(batchfit.__file__, n.version())"
so=$(ls "$work"/venv/lib/python3*/site-packages/batchfit/_batchfit*.so)
if [[ "$(ldd "$so")" == *libQt* ]]; then echo "the installed core links Qt: $so" >&2; exit 1; fi
cd "$src/tests/python"
BATCHFIT_CLI=$cli BATCHFIT_SOURCE=$src "$work/venv/bin/python" -W error::ResourceWarning -m unittest test_package
