#!/usr/bin/env bash
# Install opscan with both frameworks, the C++ build tools, the test tools and the `opscan align`
# extras (matplotlib for the loss plot, mindstudio-probe for the msprobe interop tests).
# torch is pinned to 2.13.0 (CPU build) and paddlepaddle to 3.3.1: a looser range would
# pull a newer torch with several GB of CUDA packages.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
"$PY" -m pip install --quiet --disable-pip-version-check -e ".[all]"
# The torch_npu wheels opdb reads (pip download --no-deps into the user cache,
# ~/.cache/opscan/wheels or $OPSCAN_CACHE/wheels); reused when already there.
"$PY" -m opdb.wheels
# Headless Chromium checks the HTML report (Debian package; optional elsewhere).
# Debian packages the tests use: a C++ compiler (opgen's builds and in-tree checks; cmake
# itself comes from the build extra) and chromium (the HTML report screenshot).
missing=()
command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v chromium >/dev/null 2>&1 || missing+=(chromium fonts-dejavu-core)
if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null) \
    || echo "setup: could not install ${missing[*]}; the tests that need them will fail" >&2
fi
