#!/usr/bin/env bash
# The serving binaries on one machine (README "GPU"): ditserve-host as the
# only rank, with /metrics and the HTTP API on, reports SERVING, answers
# GetServerInfo with the device and dtype it was given, generates over gRPC
# (ditctl) and over HTTP, exports each rank's memory (on a GPU, the GPU's
# too), and at SIGTERM drains and exits 0. check.sh runs it on the GPU;
# tests/CMakeLists.txt on the CPU.
#
#   deploy/gpu/serving_check.sh --bin DIR --model_dir DIR [--device cuda]
#       [--dtype bfloat16] [--size 1024] [--steps 28] [--lib DIR]
#       [--log FILE]
#
#   --bin        the folder of ditserve-host and ditctl
#   --model_dir  a diffusers folder with its text encoders (e.g.
#                tests/data/golden/pipelines/flux_dev_text)
#   --lib        libraries for ditserve-host and ditctl alone
#                (pack_runtime_libs.sh's): Debian 12's copies of common
#                libraries would break the machine's own programs
#   --log        the host's log (default: a temporary file, printed on failure)
set -uo pipefail

usage() {
  echo "usage: deploy/gpu/serving_check.sh --bin DIR --model_dir DIR" \
    "[--device cuda] [--dtype bfloat16] [--size 1024] [--steps 28]" \
    "[--lib DIR] [--log FILE]" >&2
  exit 2
}

bin="" model_dir="" device=cuda dtype=bfloat16 size=1024 steps=28 lib="" log=""
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
scratch=$(mktemp -d /tmp/ditserve-serving-check.XXXXXX)
[[ -n "$log" ]] || log=$scratch/host.log
started=$(date +%s%N)
elapsed() { echo "$((($(date +%s%N) - started) / 1000000)) ms"; }
fail() {
  # A crash report (base::InstallCrashReport: "*** SIGSEGV received ...",
  # or "*** Signal N received ..." for a signal without a name, then the
  # stack) with the lines before it, which may say why (an abort's message).
  local report
  report=$(grep -n -m1 -E '\*\*\* (SIG[A-Z]+|Signal [0-9]+) received' "$log" |
    cut -d: -f1)
  if [[ -n "$report" ]]; then
    echo "serving_check.sh: FAILED: $*; the host crashed, its log ($log):"
    sed -n "$((report > 10 ? report - 10 : 1)),$((report + 80))p" "$log"
  else
    echo "serving_check.sh: FAILED: $*; the host's log ($log) ends:"
    tail -n 25 "$log"
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
free_port; grpc_port=$chosen
free_port; http_port=$chosen
free_port; metrics_port=$chosen
free_port; master_port=$chosen

RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 \
  MASTER_PORT=$master_port LD_LIBRARY_PATH=$library_path \
  "$bin/ditserve-host" --device="$device" \
  --dtype="$dtype" --model_dir="$model_dir" --listen=127.0.0.1 \
  --grpc_port="$grpc_port" --http_port="$http_port" \
  --metrics_port="$metrics_port" >"$log" 2>&1 &
host=$!
trap 'kill -KILL $host 2>/dev/null' EXIT
# Each wait is bounded: on a lent machine a hung host must not take the
# checks after this one with it.
ditctl=(ours "$bin/ditctl" "--server=127.0.0.1:$grpc_port")

deadline=$((SECONDS + 240))
until "${ditctl[@]}" --timeout=2 health >/dev/null 2>&1; do
  kill -0 "$host" 2>/dev/null || { wait "$host"; fail "the host exited ($?) while starting"; }
  ((SECONDS < deadline)) || fail "no SERVING within 240 s"
  sleep 0.5
done
echo "serving after $(elapsed)"

info=$("${ditctl[@]}" --timeout=10 info) || fail "ditctl info"
for want in "\"backend\": \"$device\"" "\"dtype\": \"$dtype\""; do
  [[ "$info" == *"$want"* ]] || fail "GetServerInfo lacks $want"
done

for run in 1 2; do
  begun=$(date +%s%N)
  said=$("${ditctl[@]}" --timeout=300 generate \
    "a lighthouse on a cliff at dusk" -W "$size" -H "$size" \
    --steps "$steps" --seed 1 -o "$scratch/$run.png" 2>&1) ||
    fail "ditctl generate ($run): ${said: -400}"
  echo "gRPC generate ${size}x${size}, $steps steps: $((($(date +%s%N) - begun) / 1000000)) ms"
done

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

kill -TERM "$host"
# The host drains for up to --drain_timeout_s (120 s by default).
deadline=$((SECONDS + 150))
while kill -0 "$host" 2>/dev/null; do
  ((SECONDS < deadline)) || fail "the host still ran 150 s after SIGTERM"
  sleep 0.2
done
wait "$host"
status=$?
trap - EXIT
((status == 0)) || fail "the host exited $status at SIGTERM"
grep -q "stopped cleanly" "$log" || fail "no \"stopped cleanly\" in the log"
rm -rf "$scratch"
echo "serving_check.sh: passed in $(elapsed)"
