#!/usr/bin/env bash
# Fails when a build lost tests: every non-hidden TEST_CASE in tests/ui and tests/report must be listed by ctest
# (as "ui: ..." / "report: ..."), and the GUI executable must exist. A build without Qt, or a test binary that
# catch_discover_tests could not list, can then never pass ./test.sh again.
#   tests/count_check.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR}
src=$(cd "$(dirname "$0")/.." && pwd)
listed=$(cd "$build" && ctest -N)
status=0
for suite in ui report; do
  # TEST_CASE("name", "[tags]"): hidden ones have a tag starting with "[." and are not run by ctest.
  expected=$(grep -h 'TEST_CASE(' "$src"/tests/$suite/*.cpp | grep -vc '"\[\.' || true)
  got=$(grep -cE "Test +#[0-9]+: $suite:" <<<"$listed" || true)
  if [ "$got" -lt "$expected" ]; then
    echo "count check: ctest lists $got '$suite:' tests, tests/$suite/*.cpp has $expected test cases" >&2
    status=1
  else
    echo "count check: $got '$suite:' tests listed (tests/$suite has $expected test cases)"
  fi
done
if [ ! -x "$build/app/batchfit" ]; then
  echo "count check: $build/app/batchfit (the desktop app) was not built" >&2
  status=1
fi
exit $status
