#!/usr/bin/env bash
# Installs dependencies, builds, checks formatting and runs every test.
# Usage: tests/run.sh [extra ctest arguments, e.g. -L unit]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

deploy/install-deps.sh

build_dir=${DITSERVE_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja
cmake --build "$build_dir" -j "$(nproc)"

# The project's own C++ sources (generated code lives under the build dir).
mapfile -t sources < <(git ls-files -- '*.cc' '*.h')
if ((${#sources[@]} > 0)); then
  clang-format --style=file --dry-run --Werror "${sources[@]}"
fi

ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" "$@"
