#!/usr/bin/env bash
# The checks of a GPU machine in one command (README "GPU"): builds the CUDA
# configuration (build.sh), runs every golden case on the GPU and the
# serving binaries (serving_check.sh), then each model at its real size
# against diffusers' pipeline
# (bench/compare_diffusers/real_size, with both sides' kernel traces kept in
# WORK/traces). Writes the random checkpoints while ditserve builds.
#
#   deploy/gpu/check.sh --libtorch DIR|python [--deps DIR] [--work DIR]
#                       [--runtime-libs ARCHIVE]
#                       [--models "flux-dev sd3-medium cogvideox-5b"]
#
#   --work    the checkpoints and the comparisons' files (default
#             /dev/shm/ditserve-gpu-check: about 24 GB for FLUX.1-dev, 4 for
#             SD3-medium, 11 for CogVideoX-5b); diffusers' source comes from
#             WORK/diffusers/src, or from the git repository that
#             DIFFUSERS_GIT names (bench/compare_diffusers/diffusers_env.py)
#   --runtime-libs  pack_runtime_libs.sh's archive, for the host on a
#             machine whose libraries are not Debian 12's (with --deps)
#   --models  the releases to compare, in this order (default: all three)
set -uo pipefail

usage() {
  echo "usage: deploy/gpu/check.sh --libtorch DIR|python [--deps DIR]" \
    "[--work DIR] [--runtime-libs ARCHIVE] [--models LIST]" >&2
  exit 2
}

repo=$(cd "$(dirname "$0")/../.." && pwd)
build_args=()
work=/dev/shm/ditserve-gpu-check
runtime_libs=""
# bench/compare_diffusers/real_size's releases.
all_models="flux-dev sd3-medium cogvideox-5b"
models=$all_models
# Each release at its pipeline's defaults (28 steps; CogVideoX-5b 50), but
# CogVideoX-5b's generation: 50 guided steps over 49 frames take minutes a
# run, more than a lent machine's time allows; per step, 8 tell the same.
declare -A model_args=([cogvideox-5b]="--steps 8")
while (($# > 0)); do
  case "$1" in
    --libtorch | --deps) build_args+=("$1" "${2:?}"); shift 2 ;;
    --work) work=${2:?}; shift 2 ;;
    --runtime-libs) runtime_libs=$(realpath -m "${2:?}"); shift 2 ;;
    --models) models=${2:?}; shift 2 ;;
    *) echo "check.sh: unknown argument $1" >&2; usage ;;
  esac
done
((${#build_args[@]} > 0)) || usage
for model in $models; do
  if [[ " $all_models " != *" $model "* ]]; then
    echo "check.sh: --models: unknown model $model; expected some of:" \
      "$all_models" >&2
    exit 2
  fi
done
build="$repo/build-cuda"
started=$(date +%s)
stamp() { echo "=== [$(($(date +%s) - started)) s] $*"; }

mkdir -p "$work"
compare() {
  (cd "$repo/bench/compare_diffusers" && python3 real_size --build "$build" \
    --work "$work" "$@")
}
stamp "writing the checkpoints of $models in $work (in the background)"
(for model in $models; do
  compare --model "$model" --checkpoint-only || exit 1
done >"$work/checkpoint.log" 2>&1) &
checkpoint=$!

stamp "building"
if ! "$repo/deploy/gpu/build.sh" "${build_args[@]}" --build-dir "$build" \
  --targets "ditserve-golden-check ditserve-bench-compare-worker \
ditserve-host ditctl"; then
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

stamp "the serving binaries on the GPU"
serving_failed=0
serving_lib=()
if [[ -n "$runtime_libs" ]]; then
  rm -rf "$build/runtime-libs"
  mkdir -p "$build/runtime-libs"
  tar -xJf "$runtime_libs" -C "$build/runtime-libs"
  serving_lib=(--lib "$build/runtime-libs")
fi
"$repo/deploy/gpu/serving_check.sh" --bin "$build/bin" "${serving_lib[@]}" \
  --model_dir "$repo/tests/data/golden/pipelines/flux_dev_text" \
  --log "$work/serving.log" || serving_failed=1

if ! wait "$checkpoint"; then
  tail -20 "$work/checkpoint.log"
  exit 1
fi
compare_failed=0
for model in $models; do
  stamp "$model at its real size against diffusers"
  # shellcheck disable=SC2086  # model_args holds several words
  compare --model "$model" ${model_args[$model]:-} --trace "$work/traces" |
    tee "$work/$model.json" || compare_failed=$((compare_failed + 1))
done
stamp finished
((golden_failed == 0 && serving_failed == 0 && compare_failed == 0))
