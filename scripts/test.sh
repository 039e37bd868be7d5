#!/usr/bin/env bash
# The test command: set up what the tests need, then run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PY=${PYTHON:-python3}
set +e
# Only tests marked `npu` (they need an Ascend NPU) may skip: tests/skipguard.py fails the run
# on any other skip and lists it (pytest's -rs summary shows every reason).
OPSCAN_STRICT_SKIPS=1 "$PY" -m pytest -q -p no:cacheprovider -rs "$@"
rc=$?
set -e
# pytest exits 5 when no test was collected: that is a failure here, not a pass.
if [ "$rc" = 5 ]; then echo "test.sh: no tests were collected" >&2; exit 1; fi
exit "$rc"
