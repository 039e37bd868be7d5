#!/usr/bin/env bash
# The test command: set up what the tests need, then run the whole suite.
#
# The suite runs as several pytest processes (the groups below), not one, so that state one
# tracing test leaves in torch or Paddle cannot reach another file's tests: a single long
# process once crashed (SIGSEGV) late in the run. The cause found was the torch tracer
# restarting the kineto profiler every step (fixed); opscan itself traces one model per
# process, and so do the tests of each tracing file here. The groups cover every file once.
#
# `bash scripts/test.sh --list-groups` prints the groups, one a line, and exits (no setup);
# tests/test_ci_groups.py checks that they cover every test file exactly once.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != "--list-groups" ] && [ "$#" -gt 0 ]; then GROUPS_=("$*"); else
  GROUPS_=("tests/test_lazy_imports.py tests/test_skipguard.py tests/test_ci_groups.py tests/opdb"
           "tests/codegen"
           "tests/analyzer/align"
           "tests/test_bad_input_matrix.py")
  for f in tests/analyzer/test_*.py; do GROUPS_+=("$f"); done
fi
if [ "${1:-}" = "--list-groups" ]; then printf '%s\n' "${GROUPS_[@]}"; exit 0; fi
bash scripts/setup.sh
PY=${PYTHON:-python3}
passed=0; failed=0; skipped=0; status=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for group in "${GROUPS_[@]}"; do
  set +e
  # Only tests marked `npu` (they need an Ascend NPU) may skip: tests/skipguard.py fails the
  # run on any other skip and lists it (pytest's -rs summary shows every reason).
  # shellcheck disable=SC2086
  OPSCAN_STRICT_SKIPS=1 "$PY" -m pytest -q -p no:cacheprovider -rs $group 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  # pytest exits 5 when no test was collected: that is a failure here, not a pass.
  if [ "$rc" = 5 ]; then echo "test.sh: no tests were collected in: $group" >&2; rc=1; fi
  [ "$rc" = 0 ] || status=$rc
  line=$(grep -E "^(=+ )?[0-9]+ (passed|failed)" "$log" | tail -n 1 || true)
  p=$(echo "$line" | grep -oE "[0-9]+ passed" | grep -oE "[0-9]+" || echo 0)
  f=$(echo "$line" | grep -oE "[0-9]+ failed" | grep -oE "[0-9]+" || echo 0)
  e=$(echo "$line" | grep -oE "[0-9]+ errors?" | grep -oE "[0-9]+" || echo 0)
  s=$(echo "$line" | grep -oE "[0-9]+ skipped" | grep -oE "[0-9]+" || echo 0)
  passed=$((passed + p)); failed=$((failed + f + e)); skipped=$((skipped + s))
  if [ "$rc" != 0 ] && [ "$f" = 0 ] && [ "$e" = 0 ]; then failed=$((failed + 1)); fi
done
echo "total: $passed passed, $failed failed, $skipped skipped"
exit "$status"
