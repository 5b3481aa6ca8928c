#!/bin/sh
# Install the system programs some tests use, when they are missing and we may:
#   chromium  - tests/explain/test_browser.py renders the `glassgrad explain` report headless
#   graphviz  - `dot`, the report's graph drawn by Graphviz (without it glassgrad's own layout draws it)
#   g++       - tests/strict/cuda_emu.py compiles the fused CUDA kernels' source for the CPU to test them
# Only as root with apt-get (Debian/Ubuntu CI images); otherwise it does nothing and exits 0
# (the tests that need these programs then skip with a reason). Prints one line of what it did.
set -u

missing=""
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing="$missing chromium"
command -v dot >/dev/null 2>&1 || missing="$missing graphviz"
command -v g++ >/dev/null 2>&1 || missing="$missing g++"

if [ -z "$missing" ]; then
    echo "ci_system_deps: chromium, graphviz and g++ already present, nothing to do"
    exit 0
fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "ci_system_deps: missing:$missing; not root or no apt-get, skipped (tests needing them will skip)"
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
ok=1
# Refresh the package lists only when they are absent or the first try cannot find the packages.
if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v -e '^lock$' -e '^partial$' -e '^auxfiles$')" ]; then
    apt-get update -q >"$log" 2>&1 || true
fi
# shellcheck disable=SC2086
if ! apt-get install -y -q $missing >>"$log" 2>&1; then
    apt-get update -q >>"$log" 2>&1 || true
    # shellcheck disable=SC2086
    apt-get install -y -q $missing >>"$log" 2>&1 || ok=0
fi
if [ "$ok" = 1 ]; then
    rm -f "$log"
    echo "ci_system_deps: installed$missing with apt-get"
else
    echo "ci_system_deps: apt-get could not install$missing (see $log); tests needing them will skip"
fi
exit 0
