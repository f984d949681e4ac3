#!/usr/bin/env bash
# Installs dependencies, checks the include order, builds, checks formatting
# and runs every test, then every fuzz target for a bounded time.
# Usage: tests/run.sh [extra ctest arguments, e.g. -L unit]
# With ctest arguments only the chosen tests run, without the fuzz targets.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

deploy/install-deps.sh
tests/check_layering.sh

# The e2e tests' gRPC reflection client (versions pinned in package-lock.json).
if [[ ! -d tests/e2e/node_modules ]]; then
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

# libFuzzer targets: their own clang build (build-fuzz/), 30 s each.
if (($# == 0)); then
  tests/fuzz/run.sh
fi
