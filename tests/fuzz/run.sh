#!/usr/bin/env bash
# Builds the libFuzzer targets with clang, ASan and UBSan into build-fuzz/
# (a configuration of its own: -DDITSERVE_FUZZ=ON) and runs each for a
# bounded time from its seed corpus tests/fuzz/<target>/. Fails on any
# crash, sanitizer report, leak, slow input (-timeout) or out-of-memory;
# the log and the input that failed stay in build-fuzz/fuzz-work/<target>/.
# Usage: tests/fuzz/run.sh [TARGET...]   (default: all)
# DITSERVE_FUZZ_SECONDS sets the time per target (default 30).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

export CCACHE_BASEDIR="$root"
build_dir=${DITSERVE_FUZZ_BUILD_DIR:-build-fuzz}
seconds=${DITSERVE_FUZZ_SECONDS:-30}
# CC and CXX choose the compiler only when the build folder is configured
# the first time.
CC=clang CXX=clang++ cmake -S . -B "$build_dir" -G Ninja -DDITSERVE_FUZZ=ON \
  >/dev/null
cmake --build "$build_dir" -j "$(nproc)"

targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(freeze control_frame safetensors checkpoint_index t5_tokenizer
    clip_tokenizer openai_images)
fi
failed=()
for target in "${targets[@]}"; do
  work="$build_dir/fuzz-work/$target"
  rm -rf "$work"
  mkdir -p "$work/corpus"
  # The first corpus folder receives what the fuzzer finds, so the seeds
  # stay as committed; TMPDIR holds the targets' scratch files.
  status=0
  TMPDIR="$work" timeout $((seconds + 120)) \
    "$build_dir/bin/${target}_fuzzer" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -detect_leaks=1 -print_final_stats=1 \
    -artifact_prefix="$work/" "$work/corpus" "tests/fuzz/$target" \
    >"$work/log" 2>&1 || status=$?
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
  if ((status != 0)); then
    tail -n 40 "$work/log"
    echo "fuzz $target: FAILED (exit $status) after ${executions:-?}" \
      "executions; log and input in $work"
    failed+=("$target")
  else
    echo "fuzz $target: ${executions} executions in ${seconds} s, no crash," \
      "leak or timeout"
  fi
done
if ((${#failed[@]} > 0)); then
  echo "fuzz: ${#failed[@]} of ${#targets[@]} targets failed: ${failed[*]}"
  exit 1
fi
