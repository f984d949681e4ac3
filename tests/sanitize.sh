#!/usr/bin/env bash
# Builds every target with AddressSanitizer and UndefinedBehaviorSanitizer
# into build-sanitize/ (-DDITSERVE_SANITIZE=ON) and runs the tests there;
# any sanitizer report fails its test.
# Usage: tests/sanitize.sh [ctest arguments]   (default: -L unit)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

export CCACHE_BASEDIR="$root"
build_dir=${DITSERVE_SANITIZE_BUILD_DIR:-build-sanitize}
cmake -S . -B "$build_dir" -G Ninja -DDITSERVE_SANITIZE=ON \
  -DDITSERVE_BUILD_BENCH=OFF >/dev/null
cmake --build "$build_dir" -j "$(nproc)"

# Child processes (the ranks an integration test starts) inherit these.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

if (($# == 0)); then
  set -- -L unit
fi
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" "$@"
