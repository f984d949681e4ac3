#!/usr/bin/env bash
# Runs each GoogleTest binary a list names whole, in one process: case by
# case, every process would spend seconds loading LibTorch (README,
# "Sanitizers"). JOBS binaries run at a time, each's output in
# LOG_DIR/NAME.log. Prints a line per binary (its exit status, time and
# gtest's summary) as each ends, then the end of each failed one's log;
# exits 1 if any failed or is not built (deploy/gpu/check.sh's build may
# have run out of time).
#
#   tests/run_gtest_binaries.sh [--lib DIR] LIST LOG_DIR [JOBS]
#
# LIST: one path a line (unit_test_binaries.txt in a build folder).
# --lib: libraries for the binaries alone, after LD_LIBRARY_PATH
# (deploy/gpu/serving_check.sh's --lib).
set -uo pipefail

usage() {
  echo "usage: tests/run_gtest_binaries.sh [--lib DIR] LIST LOG_DIR [JOBS]" >&2
  exit 2
}
lib=""
if [[ ${1:-} == --lib ]]; then
  lib=${2:?}
  shift 2
fi
(($# == 2 || $# == 3)) || usage
list=$1
log_dir=$2
jobs=${3:-1}
[[ -f "$list" ]] || { echo "run_gtest_binaries.sh: no list $list" >&2; exit 2; }
mkdir -p "$log_dir"

binary_library_path=${LD_LIBRARY_PATH:-}${lib:+${LD_LIBRARY_PATH:+:}$lib}
export binary_library_path
# Prints its binary's line as it ends: a run stopped from outside (a lent
# machine's time limit) still shows the binaries that finished.
run_one() {
  local binary=$1 log_dir=$2 name start status=0 summary
  name=$(basename "$binary")
  start=$SECONDS
  # In the caller's process group, so that a timeout around this script
  # ends the binaries too.
  timeout --foreground 1800 env LD_LIBRARY_PATH="$binary_library_path" \
    "$binary" --gtest_brief=1 >"$log_dir/$name.log" 2>&1 || status=$?
  echo "$status" >"$log_dir/$name.status"
  # A crash loses what gtest buffered for the log: the status says how it
  # ended, in the log that a lent machine's archive brings back.
  local signal
  if ((status > 128)) && signal=$(kill -l $((status - 128)) 2>/dev/null) &&
    [[ -n "$signal" ]]; then
    status="$status (SIG$signal)"
  fi
  echo "run_gtest_binaries.sh: $name exit $status" >>"$log_dir/$name.log"
  summary=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$log_dir/$name.log" |
    tr -s ' ' | paste -sd ' ' -)
  # A binary that dies before gtest's summary leaves none to quote.
  [[ -n "$summary" ]] || summary="no gtest summary"
  echo "$name exit $status in $((SECONDS - start)) s: $summary"
}
export -f run_one

mapfile -t binaries <"$list"
built=()
failed=()
for binary in "${binaries[@]}"; do
  if [[ -x "$binary" ]]; then
    built+=("$binary")
    rm -f "$log_dir/$(basename "$binary").status"
  else
    echo "run_gtest_binaries.sh: $(basename "$binary") is not built"
    failed+=("$(basename "$binary") (not built)")
  fi
done
# shellcheck disable=SC2016  # expanded by the bash that xargs starts
((${#built[@]} == 0)) || printf '%s\n' "${built[@]}" |
  xargs -d '\n' -P "$jobs" -I{} bash -c 'run_one "$1" "$2"' _ {} "$log_dir"

for binary in "${built[@]}"; do
  name=$(basename "$binary")
  read -r status <"$log_dir/$name.status" || status="no status"
  if [[ "$status" != 0 ]]; then
    failed+=("$name")
    echo "--- the end of $name's log:"
    tail -n 60 "$log_dir/$name.log"
  fi
done
echo "run_gtest_binaries.sh: ${#built[@]} of ${#binaries[@]} binaries run," \
  "${#failed[@]} failed${failed[*]:+: ${failed[*]}} (logs in $log_dir/)"
((${#failed[@]} == 0))
