#!/usr/bin/env bash
# The serving binaries on one machine (README "GPU"): ditserve-host as the
# only rank, with /metrics and the HTTP API on, reports SERVING, answers
# GetServerInfo with the device and dtype it was given, generates over gRPC
# (ditctl) and over HTTP, exports each rank's memory (on a GPU, the GPU's
# too), and at SIGTERM drains and exits 0. Then, whatever became of the
# first, a second host under --cuda_memory_fraction: on a GPU, capped at
# 256 MiB, it answers a 2048² request RESOURCE_EXHAUSTED, not to be retried
# (it ran alone; over HTTP too, unless --without-http-metrics), serves the
# next and exits 0 at SIGTERM; on a CPU it refuses to start, naming the
# flag.
# check.sh runs it on the GPU; tests/CMakeLists.txt on the CPU.
#
#   deploy/gpu/serving_check.sh --bin DIR --model_dir DIR [--device cuda]
#       [--dtype bfloat16] [--size 1024] [--steps 28] [--lib DIR]
#       [--log FILE] [--without-http-metrics] [--host-env NAME=VALUE]...
#
#   --bin        the folder of ditserve-host and ditctl
#   --model_dir  a diffusers folder with its text encoders (e.g.
#                tests/data/golden/pipelines/flux_dev_text)
#   --lib        libraries for ditserve-host and ditctl alone
#                (pack_runtime_libs.sh's): Debian 12's copies of common
#                libraries would break the machine's own programs
#   --log        the host's log (default: a temporary file, printed on
#                failure); the capped host's goes to the same name + .capped
#   --without-http-metrics  neither the HTTP API nor /metrics (what check.sh
#                tries after a host crashed: fault 2 of README "GPU" came
#                as those servers started)
#   --host-env   an environment variable for the hosts alone (check.sh's
#                LD_DEBUG, which would otherwise trace every ditctl call)
#
# Exits 0 when both checks pass, 3 when a host crashed (its crash report in
# the log, or a signal ended it: one the report could not catch, SIGKILL,
# or one that came before the report was installed), 1 on any other
# failure.
set -uo pipefail

usage() {
  echo "usage: deploy/gpu/serving_check.sh --bin DIR --model_dir DIR" \
    "[--device cuda] [--dtype bfloat16] [--size 1024] [--steps 28]" \
    "[--lib DIR] [--log FILE] [--without-http-metrics]" \
    "[--host-env NAME=VALUE]..." >&2
  exit 2
}

bin="" model_dir="" device=cuda dtype=bfloat16 size=1024 steps=28 lib="" log=""
http_metrics=1
host_env=()
while (($# > 0)); do
  case "$1" in
    --bin) bin=${2:?}; shift 2 ;;
    --model_dir) model_dir=${2:?}; shift 2 ;;
    --device) device=${2:?}; shift 2 ;;
    --dtype) dtype=${2:?}; shift 2 ;;
    --size) size=${2:?}; shift 2 ;;
    --steps) steps=${2:?}; shift 2 ;;
    --lib) lib=${2:?}; shift 2 ;;
    --log) log=${2:?}; shift 2 ;;
    --without-http-metrics) http_metrics=0; shift ;;
    --host-env)
      [[ ${2:-} == ?*=* ]] || { echo "serving_check.sh: --host-env takes NAME=VALUE" >&2; usage; }
      host_env+=("$2"); shift 2 ;;
    *) echo "serving_check.sh: unknown argument $1" >&2; usage ;;
  esac
done
[[ -n "$bin" && -n "$model_dir" ]] || usage
for program in ditserve-host ditctl; do
  if [[ ! -x "$bin/$program" ]]; then
    echo "serving_check.sh: no $program in --bin $bin" >&2
    exit 2
  fi
done
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ditserve-serving-check.XXXXXX")
[[ -n "$log" ]] || log=$scratch/host.log
script_started=$(date +%s%N)
host_status=0
started=$script_started
elapsed() { echo "$((($(date +%s%N) - started) / 1000000)) ms"; }
# Ends the check of one host (each runs in a subshell of its own).
fail() {
  # A host that ended mid-check (the kernel's OOM killer, say) has not been
  # reaped yet: its status says how it ended.
  if ((host_status == 0)) && [[ -n ${host-} ]] &&
    ! kill -0 "$host" 2>/dev/null; then
    wait "$host"
    host_status=$?
  fi
  # A crash report (base::InstallCrashReport: "*** SIGSEGV received ...",
  # or "*** Signal N received ..." for a signal without a name, then the
  # stack) with the lines before it, which may say why (an abort's message).
  local report
  if [[ ! -f "$log" ]]; then
    echo "serving_check.sh: FAILED: $*"
    exit 1
  fi
  report=$(grep -n -m1 -E '\*\*\* (SIG[A-Z]+|Signal [0-9]+) received' "$log" |
    cut -d: -f1)
  if [[ -n "$report" ]]; then
    echo "serving_check.sh: FAILED: $*; the host crashed, its log ($log):"
    sed -n "$((report > 10 ? report - 10 : 1)),$((report + 80))p" "$log"
    exit 3
  fi
  echo "serving_check.sh: FAILED: $*; the host's log ($log) ends:"
  tail -n 25 "$log"
  # SIGTERM is this script's own stop, which the host should have drained.
  if ((host_status > 128 && host_status != 128 + 15)); then
    echo "serving_check.sh: the host crashed: $(kill -l "$((host_status - 128))" \
      2>/dev/null || echo "signal $((host_status - 128))") ended it" \
      "without a crash report"
    exit 3
  fi
  exit 1
}
library_path=${LD_LIBRARY_PATH:-}${lib:+${LD_LIBRARY_PATH:+:}$lib}
ours() { LD_LIBRARY_PATH=$library_path "$@"; }

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
taken=" "
free_port() {
  local port=$((20000 + RANDOM % 20000))
  while port_in_use "$port" || [[ "$taken" == *" $port "* ]]; do
    port=$((port + 1))
  done
  taken+="$port "
  chosen=$port
}
# One host at a time, the only rank of its group, its output in $log; the
# times printed count from its start.
start_host() {
  started=$(date +%s%N)
  host_status=0
  free_port; grpc_port=$chosen
  free_port; master_port=$chosen
  env RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 \
    MASTER_PORT="$master_port" LD_LIBRARY_PATH="$library_path" \
    "${host_env[@]}" "$bin/ditserve-host" --device="$device" \
    --dtype="$dtype" --model_dir="$model_dir" --listen=127.0.0.1 \
    --grpc_port="$grpc_port" "$@" >"$log" 2>&1 &
  host=$!
  trap 'kill -KILL $host 2>/dev/null' EXIT
  ditctl=(ours "$bin/ditctl" "--server=127.0.0.1:$grpc_port")
}

# Each wait is bounded: on a lent machine a hung host must not take the
# checks after this one with it.
wait_serving() {
  local deadline=$((SECONDS + 240))
  until "${ditctl[@]}" --timeout=2 health >/dev/null 2>&1; do
    if ! kill -0 "$host" 2>/dev/null; then
      wait "$host"
      host_status=$?
      fail "the host exited ($host_status) while starting"
    fi
    ((SECONDS < deadline)) || fail "no SERVING within 240 s"
    sleep 0.5
  done
  echo "serving after $(elapsed)"
}

# The host's exit status in $status, once it exits within $1 s.
wait_exit() {
  local deadline=$((SECONDS + $1))
  while kill -0 "$host" 2>/dev/null; do
    ((SECONDS < deadline)) || fail "the host still ran $1 s after $2"
    sleep 0.2
  done
  wait "$host"
  status=$?
  host_status=$status
  trap - EXIT
}

stop_host() {
  kill -TERM "$host"
  # The host drains for up to --drain_timeout_s (120 s by default).
  wait_exit 150 SIGTERM
  ((status == 0)) || fail "the host exited $status at SIGTERM"
  grep -q "stopped cleanly" "$log" || fail "no \"stopped cleanly\" in the log"
}

# The end of what `generate` printed: ${said: -N} would be empty when it is
# shorter than N.
said_last() { tail -c 400 <<<"$said"; }

# `ditctl generate` at SIZE², its output in $said.
generate() {
  said=$("${ditctl[@]}" --timeout=300 generate \
    "a lighthouse on a cliff at dusk" -W "$1" -H "$1" \
    --steps "$steps" --seed 1 -o "$scratch/$1.png" 2>&1)
}

check_served() {
  local served=() http_port metrics_port
  if ((http_metrics)); then
    free_port; http_port=$chosen
    free_port; metrics_port=$chosen
    served=(--http_port="$http_port" --metrics_port="$metrics_port")
  else
    served=(--metrics_port=0)
  fi
  start_host "${served[@]}"
  wait_serving

  info=$("${ditctl[@]}" --timeout=10 info) || fail "ditctl info"
  for want in "\"backend\": \"$device\"" "\"dtype\": \"$dtype\""; do
    [[ "$info" == *"$want"* ]] || fail "GetServerInfo lacks $want"
  done

  for run in 1 2; do
    begun=$(date +%s%N)
    generate "$size" || fail "ditctl generate ($run): $(said_last)"
    echo "gRPC generate ${size}x${size}, $steps steps: $((($(date +%s%N) - begun) / 1000000)) ms"
  done

  if ((http_metrics)); then
    python3 - "$http_port" "$metrics_port" "$device" <<'PY' || fail "HTTP API or /metrics"
import json
import sys
import urllib.request

http_port, metrics_port, device = sys.argv[1:]
request = urllib.request.Request(
    f"http://127.0.0.1:{http_port}/v1/images/generations",
    json.dumps({"prompt": "a red bicycle", "size": "256x256"}).encode(),
    {"Content-Type": "application/json"})
with urllib.request.urlopen(request, timeout=300) as response:
    images = json.load(response)["data"]
assert len(images) == 1 and images[0]["b64_json"], images
print("HTTP generate 256x256: 1 image")
with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=30) as response:
    memory = [line for line in response.read().decode().splitlines()
              if line.startswith("ditserve_rank_memory_bytes{")]
assert memory, "no ditserve_rank_memory_bytes"
gpu_kinds = any('kind="device_reserved"' in line for line in memory)
assert gpu_kinds == (device == "cuda"), f"device_reserved on {device}: {gpu_kinds}"
print("\n".join(memory))
PY
  fi
  stop_host
}

# 256 MiB holds the tiny models' weights and a 256² run; a 2048² run's VAE
# decode alone needs more (its last block's activations, 16 channels in
# float32, are 256 MiB each).
check_capped() {
  log=$log.capped
  if [[ $device != cuda ]]; then
    start_host --metrics_port=0 --cuda_memory_fraction=0.5
    wait_exit 60 "starting with --cuda_memory_fraction on a CPU"
    ((status != 0)) || fail "the host took --cuda_memory_fraction on a CPU"
    grep -q -- "--cuda_memory_fraction 0.5 needs --device cuda" "$log" ||
      fail "the refusal does not name --cuda_memory_fraction"
    echo "--cuda_memory_fraction on a CPU: refused in $(elapsed)"
    return
  fi
  # The GPU the host's LOCAL_RANK 0 picks, as CUDA numbers it (after
  # CUDA_VISIBLE_DEVICES; a MIG slice's own memory).
  local total_mib fraction
  total_mib=$(timeout 120 python3 -c 'import torch
print(torch.cuda.get_device_properties(0).total_memory >> 20)')
  [[ $total_mib =~ ^[0-9]+$ ]] ||
    fail "python3's torch could not tell the GPU's memory: $total_mib"
  fraction=$(python3 -c "print(256 / $total_mib)")
  local served=(--metrics_port=0) http_port=""
  if ((http_metrics)); then
    free_port; http_port=$chosen
    served+=(--http_port="$http_port")
  fi
  start_host "${served[@]}" --cuda_memory_fraction="$fraction"
  wait_serving
  # "out of memory": the allocator's, not an admission refusal
  # (--max_request_bytes); "ran alone": not to be retried.
  generate 2048 && fail "2048² under 256 MiB did not run out: $(said_last)"
  [[ $said == *RESOURCE_EXHAUSTED* && $said == *"out of memory"* &&
    $said == *"ran alone"* ]] ||
    fail "2048² under 256 MiB: not RESOURCE_EXHAUSTED, out of memory, ran alone: $(said_last)"
  echo "2048² under 256 MiB (--cuda_memory_fraction=$fraction): $(said_last)"
  if [[ -n $http_port ]]; then
    # Over HTTP the answer also says whether to retry.
    said=$(timeout 330 python3 - "$http_port" "$steps" <<'PY' 2>&1
import json
import sys
import urllib.error
import urllib.request

port, steps = sys.argv[1:]
request = urllib.request.Request(
    f"http://127.0.0.1:{port}/v1/images/generations",
    json.dumps({"prompt": "a red bicycle", "size": "2048x2048",
                "num_inference_steps": int(steps)}).encode(),
    {"Content-Type": "application/json"})
try:
    urllib.request.urlopen(request, timeout=300)
    sys.exit("2048x2048 under 256 MiB was served")
except urllib.error.HTTPError as error:
    message = json.load(error)["error"]["message"]
    retry = error.headers.get("x-should-retry")
    after = error.headers.get("Retry-After")
    print(f"HTTP {error.code}, x-should-retry: {retry}, Retry-After: {after}")
    if (error.code != 429 or retry != "false" or after is not None
            or "ran alone" not in message):
        sys.exit(f"expected 429, x-should-retry: false, no Retry-After: {message}")
PY
    ) || fail "2048² under 256 MiB over HTTP: $(said_last)"
    echo "2048² under 256 MiB over HTTP: $(said_last)"
  fi
  generate 256 || fail "256² after running out: $(said_last)"
  echo "256² after running out: ok"
  stop_host
}

# Each host's check on its own, so that a fault of the first (README "GPU")
# does not hide what the second would show.
failures=0
crashes=0
for check in check_served check_capped; do
  status=0
  ("$check") || status=$?
  ((status == 0)) || failures=$((failures + 1))
  ((status != 3)) || crashes=$((crashes + 1))
done
if ((failures > 0)); then
  echo "serving_check.sh: FAILED, $failures of 2 hosts' checks (above)," \
    "$crashes by a crash; logs in $(dirname "$log")"
  ((crashes == 0)) || exit 3
  exit 1
fi
rm -rf "$scratch"
started=$script_started
echo "serving_check.sh: passed in $(elapsed)"
