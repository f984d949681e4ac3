#!/usr/bin/env bash
# The checks of a GPU machine in one command (README "GPU"): builds the CUDA
# configuration (build.sh), runs every golden case on the GPU, then FLUX.1-dev
# at its real size against diffusers' FluxPipeline (flux_dev_gpu, with both
# sides' kernel traces kept in WORK/traces). Writes the random checkpoint
# while ditserve builds.
#
#   deploy/gpu/check.sh --libtorch DIR|python [--deps DIR] [--work DIR]
#                       [--steps N]
#
#   --work  the checkpoint and the comparison's files (default
#           /dev/shm/ditserve-gpu-check: about 24 GB); diffusers' source comes
#           from WORK/diffusers/src, or from the git repository that
#           DIFFUSERS_GIT names (bench/compare_diffusers/diffusers_env.py)
set -uo pipefail

usage() {
  echo "usage: deploy/gpu/check.sh --libtorch DIR|python [--deps DIR]" \
    "[--work DIR] [--steps N]" >&2
  exit 2
}

repo=$(cd "$(dirname "$0")/../.." && pwd)
build_args=()
work=/dev/shm/ditserve-gpu-check
steps=28
while (($# > 0)); do
  case "$1" in
    --libtorch | --deps) build_args+=("$1" "${2:?}"); shift 2 ;;
    --work) work=${2:?}; shift 2 ;;
    --steps) steps=${2:?}; shift 2 ;;
    *) echo "check.sh: unknown argument $1" >&2; usage ;;
  esac
done
((${#build_args[@]} > 0)) || usage
build="$repo/build-cuda"
started=$(date +%s)
stamp() { echo "=== [$(($(date +%s) - started)) s] $*"; }

mkdir -p "$work"
stamp "writing the FLUX.1-dev checkpoint in $work (in the background)"
(cd "$repo/bench/compare_diffusers" && python3 flux_dev_gpu --build "$build" \
  --work "$work" --checkpoint-only >"$work/checkpoint.log" 2>&1) &
checkpoint=$!

stamp "building"
if ! "$repo/deploy/gpu/build.sh" "${build_args[@]}" --build-dir "$build" \
  --targets "ditserve-golden-check ditserve-bench-compare-worker"; then
  kill "$checkpoint" 2>/dev/null
  exit 1
fi
if [[ -f "$build/env.sh" ]]; then
  # shellcheck disable=SC1091  # written by build.sh --deps
  source "$build/env.sh"
fi

# One process per case, so that a crash (the T5 tokenizer's, README "GPU")
# costs only its case.
stamp "golden cases on the GPU"
golden_failed=0
for case_dir in "$repo"/tests/data/golden/*/*; do
  "$build/bin/ditserve-golden-check" --device cuda "$case_dir" ||
    { echo "FAILED (exit $?) $case_dir"; golden_failed=$((golden_failed + 1)); }
done
echo "$golden_failed golden cases failed"

stamp "FLUX.1-dev, 1024², $steps steps, against diffusers"
if ! wait "$checkpoint"; then
  tail -20 "$work/checkpoint.log"
  exit 1
fi
(cd "$repo/bench/compare_diffusers" && python3 flux_dev_gpu --build "$build" \
  --work "$work" --size 1024 --steps "$steps" --trace "$work/traces") || exit 1
stamp finished
((golden_failed == 0))
