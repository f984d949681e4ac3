#!/usr/bin/env bash
# Installs dependencies, checks the include order, builds, checks formatting
# and runs every test, then every fuzz target for a bounded time, then the
# unit tests instrumented with sanitizers if CI's time allows.
# Usage: tests/run.sh [extra ctest arguments, e.g. -L unit]
# With ctest arguments only the chosen tests run, without the fuzz targets
# or the sanitizers.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

deploy/install-deps.sh
tests/check_layering.sh

# The e2e tests' gRPC reflection client (versions pinned in package-lock.json),
# again when the lock file changed since, or an install stopped before npm
# wrote its own copy of it.
if [[ ! tests/e2e/node_modules/.package-lock.json -nt tests/e2e/package-lock.json ]]; then
  (cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error)
fi

# Let ccache reuse objects compiled in another checkout of the project.
export CCACHE_BASEDIR="$root"
build_dir=${DITSERVE_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja
cmake --build "$build_dir" -j "$(nproc)"

# The project's own C++ sources (generated code lives under the build dir).
mapfile -t sources < <(git ls-files -- '*.cc' '*.h')
if ((${#sources[@]} > 0)); then
  clang-format --style=file --dry-run --Werror "${sources[@]}"
fi

ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" "$@"

# Without ctest arguments: the libFuzzer targets, in their own clang build
# (build-fuzz/), 30 s each; then the unit tests built with ASan and UBSan
# (build-sanitize/), if what is left of the CI budget
# (DITSERVE_CI_SECONDS, 5 minutes under CI's 60) less the 7 minutes their run
# needs lets the instrumented build finish.
if (($# == 0)); then
  tests/fuzz/run.sh
  ci_seconds=${DITSERVE_CI_SECONDS:-3300}
  tests/sanitize.sh --build-seconds $((ci_seconds - SECONDS - 420))
fi
