#!/usr/bin/env bash
# The checks of a GPU machine (README "GPU"), stage by stage; a lent
# machine's time is short, so --seconds bounds them all, and a stage that
# would start later says so and does not.
#
#   deploy/gpu/check.sh [--libtorch DIR|python] [--deps DIR] [--work DIR]
#                       [--runtime-libs ARCHIVE] [--models LIST]
#                       [--stages LIST] [--seconds N] [--logs ARCHIVE]
#                       [--cmake-arg ARG]...
#
#   --stages  some of these, run in this order whatever order they are given
#             in (default: build golden serving compare):
#     build       the CUDA configuration (build.sh; needs --libtorch): the
#                 host, ditctl, golden-check and the comparison worker
#     golden      every golden case on the GPU, a process each
#     unit-build  the unit test binaries (build.sh with the tests
#                 configured, --keep-going; needs --libtorch)
#     serving     serving_check.sh: one rank over gRPC, HTTP and /metrics,
#                 then SIGTERM, and a host under a GPU memory cap; if a
#                 host crashed, the same with the hosts under the dynamic
#                 linker's LD_DEBUG=bindings (what they bind in LibTorch's
#                 libraries is summarised), and again without HTTP and
#                 /metrics
#     unit        unit-build, then each unit test binary that built, whole
#                 (tests/run_gtest_binaries.sh), 8 at a time; a test that
#                 takes a GPU takes the machine's
#     compare     --models at their real sizes against diffusers' pipeline
#                 (bench/compare_diffusers/real_size, both sides' kernel
#                 traces in WORK/traces); their checkpoints are written
#                 while the stages before run
#   --seconds  how long everything may take, from check.sh's start (default:
#             no limit): a stage, or a command within one, that would run
#             past it is stopped, and one that would start after it is not
#   --work    the checkpoints and the logs (default /dev/shm/ditserve-gpu-
#             check: about 24 GB for FLUX.1-dev, 4 for SD3-medium, 11 for
#             CogVideoX-5b); diffusers' source comes from WORK/diffusers/src,
#             or from the git repository that DIFFUSERS_GIT names
#             (bench/compare_diffusers/diffusers_env.py)
#   --runtime-libs  pack_runtime_libs.sh's archive, for the host and the
#             tests on a machine whose libraries are not Debian 12's (with
#             --deps)
#   --models  the releases to compare, in this order (default: all three)
#   --logs    at the end, the logs in WORK (the builds', the hosts', the
#             bindings, the unit tests') in one .tar.gz: the console shows
#             only the end of each
#   --cmake-arg  an argument for build.sh's CMake configuration (e.g.
#             "-DCMAKE_CXX_FLAGS=-include cstdint"), as often as needed
set -uo pipefail

usage() {
  echo "usage: deploy/gpu/check.sh [--libtorch DIR|python] [--deps DIR]" \
    "[--work DIR] [--runtime-libs ARCHIVE] [--models LIST]" \
    "[--stages LIST] [--seconds N] [--logs ARCHIVE] [--cmake-arg ARG]..." >&2
  exit 2
}

repo=$(cd "$(dirname "$0")/../.." && pwd)
build_args=()
cmake_args=()
logs=""
libtorch=""
work=/dev/shm/ditserve-gpu-check
runtime_libs=""
# bench/compare_diffusers/real_size's releases.
all_models="flux-dev sd3-medium cogvideox-5b"
models=$all_models
all_stages="build golden unit-build serving unit compare"
stages="build golden serving compare"
seconds=""
# Each release at its pipeline's defaults (28 steps; CogVideoX-5b 50), but
# CogVideoX-5b's generation: 50 guided steps over 49 frames take minutes a
# run, more than a lent machine's time allows; per step, 8 tell the same.
declare -A model_args=([cogvideox-5b]="--steps 8")
while (($# > 0)); do
  case "$1" in
    --libtorch) libtorch=${2:?}; build_args+=("$1" "$2"); shift 2 ;;
    --deps) build_args+=("$1" "${2:?}"); shift 2 ;;
    --work) work=$(realpath -m "${2:?}"); shift 2 ;;
    --runtime-libs) runtime_libs=$(realpath -m "${2:?}"); shift 2 ;;
    --models) models=${2:?}; shift 2 ;;
    --stages) stages=${2:?}; shift 2 ;;
    --seconds) seconds=${2:?}; shift 2 ;;
    --logs) logs=$(realpath -m "${2:?}"); shift 2 ;;
    --cmake-arg) cmake_args+=("${2:?}"); shift 2 ;;
    *) echo "check.sh: unknown argument $1" >&2; usage ;;
  esac
done
# A misspelt model or stage stops the script before anything runs: on a
# lent machine, skipping it silently would waste the lease. `given` holds
# words of `flag`, each a `noun` that `allowed` must list.
only() {
  local flag=$1 noun=$2 allowed=$3 given=$4 word
  for word in $given; do
    if [[ " $allowed " != *" $word "* ]]; then
      echo "check.sh: $flag: unknown $noun $word; expected some of:" \
        "$allowed" >&2
      exit 2
    fi
  done
}
only --models model "$all_models" "$models"
only --stages stage "$all_stages" "$stages"
selected() { [[ " $stages " == *" $1 "* ]]; }
for stage in build unit-build unit; do
  if selected "$stage" && [[ -z "$libtorch" ]]; then
    echo "check.sh: the $stage stage needs --libtorch" >&2
    usage
  fi
done
if [[ -n "$seconds" && ! "$seconds" =~ ^[0-9]+$ ]]; then
  echo "check.sh: --seconds $seconds: expected a whole number of seconds" >&2
  exit 2
fi
build="$repo/build-cuda"
started=$(date +%s)
elapsed() { echo $(($(date +%s) - started)); }
stamp() { echo "=== [$(elapsed) s] $*"; }
# The seconds --seconds leave, in $left (none: no limit).
seconds_left() {
  left=""
  [[ -z "$seconds" ]] || left=$((seconds - $(elapsed)))
}
out_of_time() {
  seconds_left
  [[ -n "$left" ]] && ((left <= 0))
}
# Whether `stage` may start; says why not.
may_start() {
  if out_of_time; then
    stamp "$1: skipped, --seconds $seconds have passed"
    return 1
  fi
  stamp "$1"
}
# COMMAND..., ended (exit 124) when --seconds run out: a lent machine goes
# back at its own limit, and what has not printed by then is lost.
bounded() {
  seconds_left
  if [[ -z "$left" ]]; then
    "$@"
  elif ((left > 0)); then
    timeout -k 15 "$left" "$@"
  else
    return 124
  fi
}
failed=()

mkdir -p "$work"
# At whatever exit, a failed build's too.
pack_logs() {
  mkdir -p "$(dirname "$logs")"
  (cd "$work" && find . -maxdepth 2 \( -name '*.log' -o -name '*.log.*' -o \
    -name 'bindings-into-libtorch.txt' \) -print0 |
    tar -czf "$logs" --null -T -)
  echo "logs: $logs ($(du -h "$logs" | cut -f1))"
}
[[ -z "$logs" ]] || trap pack_logs EXIT
compare() {
  (cd "$repo/bench/compare_diffusers" &&
    bounded python3 real_size --build "$build" --work "$work" "$@")
}
checkpoint=""
# The checkpoint writer with its descendants, found before any is stopped:
# stopping the writer alone would leave its python3 writing, and stopping
# that first would let the writer start the next model's.
stop_checkpoints() {
  local pids=("$1") index=0 child
  while ((index < ${#pids[@]})); do
    for child in $(pgrep -P "${pids[index]}"); do
      pids+=("$child")
    done
    index=$((index + 1))
  done
  kill "${pids[@]}" 2>/dev/null
}
if selected compare; then
  stamp "writing the checkpoints of $models in $work (in the background)"
  (for model in $models; do
    compare --model "$model" --checkpoint-only || exit 1
  done >"$work/checkpoint.log" 2>&1) &
  checkpoint=$!
fi

# The tests' configuration looks for Prometheus' promtool (for the rules'
# tests) and libfaketime (for the stepped wall clock's runs), which a GPU
# machine lacks and these stages do not run.
with_tests=(-DDITSERVE_BUILD_TESTS=ON -DPROMTOOL=/bin/false
  -DDITSERVE_LIBFAKETIME=/bin/false)
# build.sh's check of which libstdc++ the binaries take (README "GPU"), kept
# with the logs under the stage's name, and its count.
link_check() {
  local stage=$1 log
  for log in link-order link-trace; do
    [[ ! -f "$build/$log.log" ]] || cp "$build/$log.log" "$work/$stage-$log.log"
  done
  [[ -f "$work/$stage-link-order.log" ]] || return 0
  echo "libstdc++'s symbols from libstdc++: $(grep -c '^ok' \
    "$work/$stage-link-order.log") binaries; refused: $(grep -c '^FAIL' \
    "$work/$stage-link-order.log")"
}
if selected build && may_start build; then
  if ! bounded "$repo/deploy/gpu/build.sh" "${build_args[@]}" \
    --build-dir "$build" --targets "ditserve-golden-check \
ditserve-bench-compare-worker ditserve-host ditctl" -- "${cmake_args[@]}" \
    >"$work/build.log" 2>&1; then
    tail -n 60 "$work/build.log"
    link_check build
    [[ -z "$checkpoint" ]] || stop_checkpoints "$checkpoint"
    exit 1
  fi
  tail -n 1 "$work/build.log"
  link_check build
fi
if [[ -f "$build/env.sh" ]]; then
  # shellcheck disable=SC1091  # written by build.sh --deps
  source "$build/env.sh"
fi
lib_dir=""
if [[ -n "$runtime_libs" ]]; then
  lib_dir="$build/runtime-libs"
  rm -rf "$lib_dir"
  mkdir -p "$lib_dir"
  tar -xJf "$runtime_libs" -C "$lib_dir"
  # A library the machine has under the same name stays the machine's: its
  # own programs, loaded beside ours, may need its newer version.
  ldconfig -p | awk '/x86-64/ {print $1}' >"$work/machine-libraries"
  for library in "$lib_dir"/*; do
    if grep -qxF "$(basename "$library")" "$work/machine-libraries"; then
      rm -f "$library"
    fi
  done
  echo "$(find "$lib_dir" -type f | wc -l) runtime libraries this machine lacks"
fi

# One process per case, so that a crash (the T5 tokenizer's, README "GPU")
# costs only its case.
if selected golden && may_start "golden cases on the GPU"; then
  golden_failed=0
  for case_dir in "$repo"/tests/data/golden/*/*; do
    if out_of_time; then
      echo "golden cases: --seconds ran out before $case_dir"
      golden_failed=$((golden_failed + 1))
      break
    fi
    bounded "$build/bin/ditserve-golden-check" --device cuda "$case_dir" ||
      { echo "FAILED (exit $?) $case_dir"; golden_failed=$((golden_failed + 1)); }
  done
  echo "$golden_failed golden cases failed"
  ((golden_failed == 0)) || failed+=(golden)
fi

# The unit test binaries, in the tests' configuration, leaving the last
# RESERVE seconds of --seconds to run them; what was built when the time ran
# out stays built. Through build.sh, which sets up --deps again: a check.sh
# after another may find the build folder configured but not its
# environment. --keep-going: every source LibTorch 2.x refuses is worth
# seeing, not only the first.
build_unit_tests() {
  local reserve=$1 status=0 limit=()
  seconds_left
  if [[ -n "$left" ]]; then
    if ((left <= reserve)); then
      echo "the unit tests: no time left to build them"
      return
    fi
    limit=(timeout -k 15 $((left - reserve)))
  fi
  "${limit[@]}" "$repo/deploy/gpu/build.sh" "${build_args[@]}" \
    --build-dir "$build" --targets unit_test_binaries --keep-going -- \
    "${with_tests[@]}" "${cmake_args[@]}" >>"$work/unit-build.log" 2>&1 ||
    status=$?
  if ((status == 124)); then
    echo "the unit test binaries did not all build in the time left"
  elif ((status != 0)); then
    grep -E '(error|FAILED):|^build\.sh:' "$work/unit-build.log" | head -n 40
    grep -A2 '^FAIL ' "$work/unit-build.log" | head -n 12
    echo "the unit test binaries did not all build (exit $status)"
    failed+=(unit-build)
  fi
  tail -n 1 "$work/unit-build.log"
  link_check unit-build
}
if selected unit-build && may_start "building the unit tests"; then
  build_unit_tests 0
fi

if selected serving && may_start "the serving binaries on the GPU"; then
  serving=("$repo/deploy/gpu/serving_check.sh" --bin "$build/bin"
    ${lib_dir:+--lib "$lib_dir"}
    --model_dir "$repo/tests/data/golden/pipelines/flux_dev_text")
  rm -f "$work"/serving*.log*
  serving_status=0
  bounded "${serving[@]}" --log "$work/serving.log" || serving_status=$?
  ((serving_status == 0)) || failed+=(serving)
  if ((serving_status == 3)); then
    # Fault 1 (README "GPU") was a call bound to LibTorch's copy of a
    # standard library function: which of its definitions did the host's
    # code and the other libraries get?
    stamp "a host crashed: the same under LD_DEBUG=bindings"
    rm -rf "$work/ld-debug"
    mkdir -p "$work/ld-debug"
    bounded "${serving[@]}" --log "$work/serving-ld-debug.log" \
      --host-env LD_DEBUG=bindings \
      --host-env LD_DEBUG_OUTPUT="$work/ld-debug/ld" >/dev/null
    # "binding file FROM [0] to TO [0]: normal symbol `NAME'": from
    # anything but LibTorch's and CUDA's own libraries into LibTorch's, and
    # not in LibTorch's own namespaces (after a return type, if any), which
    # the host uses by design.
    grep -h 'binding file' "$work"/ld-debug/ld.* |
      sed -nE 's/.*binding file ([^ ]+) \[[0-9]+\] to ([^ ]+) \[[0-9]+\]: [a-z]+ symbol `([^'"'"']+)'"'"'.*/\1 \2 \3/p' |
      awk '$2 ~ /lib(torch|c10)[^\/]*$/ && $1 !~ /lib(torch|c10|cu|nccl|nv)[^\/]*$/' |
      sort -u | c++filt |
      grep -vE '^[^ ]+ [^ ]+ ((vtable|typeinfo|typeinfo name|VTT|guard variable) for |([^ (<,]+ )+)?(at|c10|c10d|torch|caffe2)::' \
        >"$work/bindings-into-libtorch.txt"
    echo "bindings into LibTorch's libraries, by library" \
      "(all in $work/bindings-into-libtorch.txt):"
    awk '{print $1 " -> " $2}' "$work/bindings-into-libtorch.txt" |
      sort | uniq -c | sort -rn | head -20
    for side in "our binaries" "the other libraries"; do
      echo "symbols of $side (the first 40):"
      if [[ $side == "our binaries" ]]; then
        grep -F "$build/bin/" "$work/bindings-into-libtorch.txt"
      else
        grep -vF "$build/bin/" "$work/bindings-into-libtorch.txt"
      fi | cut -d' ' -f3- | sort -u | cut -c1-200 | head -40
    done
    stamp "the serving binaries without HTTP and /metrics"
    bounded "${serving[@]}" --without-http-metrics \
      --log "$work/serving-plain.log"
  fi
fi

if selected unit && may_start "the unit tests"; then
  build_unit_tests 90
  # GoogleTest's binaries alone: the unit label's scripts check this
  # machine's tools, not the CUDA build.
  if ! bounded "$repo/tests/run_gtest_binaries.sh" ${lib_dir:+--lib "$lib_dir"} \
    "$build/unit_test_binaries.txt" "$work/unit-logs" 8; then
    out_of_time && echo "the unit tests: --seconds ran out"
    failed+=(unit)
  fi
fi

if selected compare && may_start "the comparisons with diffusers"; then
  while kill -0 "$checkpoint" 2>/dev/null; do
    if out_of_time; then
      stop_checkpoints "$checkpoint"
      break
    fi
    sleep 1
  done
  if ! wait "$checkpoint"; then
    tail -20 "$work/checkpoint.log"
    failed+=(checkpoints)
  else
    for model in $models; do
      may_start "$model at its real size against diffusers" || break
      # shellcheck disable=SC2086  # model_args holds several words
      compare --model "$model" ${model_args[$model]:-} \
        --trace "$work/traces" | tee "$work/$model.json" ||
        failed+=("compare $model")
    done
  fi
elif [[ -n "$checkpoint" ]]; then
  stop_checkpoints "$checkpoint"
fi
stamp "finished${failed[*]:+; failed: ${failed[*]}}"
((${#failed[@]} == 0))
