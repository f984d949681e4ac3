#!/usr/bin/env bash
# Builds with AddressSanitizer and UndefinedBehaviorSanitizer into
# build-sanitize/ (-DDITSERVE_SANITIZE=ON) and runs tests there; any
# sanitizer report fails its test.
# Usage:
#   tests/sanitize.sh [--build-seconds N]
#       builds only what the unit label runs, runs each GoogleTest binary
#       whole, in one process (tests/run_gtest_binaries.sh), then the golden
#       cases; with --build-seconds,
#       a build that does not finish in N s skips the run (exit 0) and says
#       so, for tests/run.sh's CI budget.
#   tests/sanitize.sh CTEST_ARGUMENTS...   e.g. -L integration
#       builds every target and runs ctest with those arguments.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

build_seconds=
if [[ ${1:-} == --build-seconds ]]; then
  build_seconds=$2
  shift 2
fi

export CCACHE_BASEDIR="$root"
# The instrumented build compiles with debug info, into which ccache would
# hash the working directory: a checkout at another path (each CI clone)
# would miss every object. Debug paths may then name the earlier checkout.
export CCACHE_NOHASHDIR=1
build_dir=${DITSERVE_SANITIZE_BUILD_DIR:-build-sanitize}
cmake -S . -B "$build_dir" -G Ninja -DDITSERVE_SANITIZE=ON \
  -DDITSERVE_BUILD_BENCH=OFF >/dev/null

# Child processes (the ranks an integration test starts) inherit these. A
# request no machine can hold fails as it does uninstrumented, as LibTorch's
# out-of-memory exception, not as an ASan report (allocator_may_return_null).
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

if (($# > 0)); then
  cmake --build "$build_dir" -j "$(nproc)"
  exec ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" "$@"
fi

build=(cmake --build "$build_dir" -j "$(nproc)" --target unit_test_binaries)
if [[ -n $build_seconds ]]; then
  if ((build_seconds < 60)); then
    echo "sanitize: skipped, the ${build_seconds} s left are too few to build"
    exit 0
  fi
  status=0
  timeout "$build_seconds" "${build[@]}" || status=$?
  if ((status == 124)); then
    echo "sanitize: skipped, the instrumented build did not finish in" \
      "${build_seconds} s (what it compiled stays in ccache)"
    exit 0
  fi
  ((status == 0)) || exit "$status"
else
  "${build[@]}"
fi

log_dir="$build_dir/sanitize-logs"
failed=()
tests/run_gtest_binaries.sh "$build_dir/unit_test_binaries.txt" "$log_dir" ||
  failed+=("unit binaries")
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" -L golden ||
  failed+=("the golden cases")
if ((${#failed[@]} > 0)); then
  echo "sanitize: FAILED: ${failed[*]} (logs in $log_dir/)"
  exit 1
fi
echo "sanitize: the unit binaries and the golden cases clean"
