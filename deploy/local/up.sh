#!/usr/bin/env bash
# Starts a ditserve cluster on this machine and proves it with one image.
#
#   deploy/local/up.sh [--world N] [--grpc_port P] [--http_port P]
#                      [--metrics_port P] [--run_dir DIR] [--tls_ca FILE]
#                      [any rank flag, e.g. --model_dir=DIR]
#
# Installs dependencies and builds if needed, starts N ranks (default 2;
# rank 0 = ditserve-host, the others ditserve-worker) with the torchrun
# variables, waits until the host reports SERVING, generates one image with
# ditctl, prints where it is, then serves until Ctrl-C, which stops every rank.
# Flags it does not know go to each rank that defines them: the rank flags
# to every rank, the host's own to the host, the workers' own (such as
# --stop_grace_s) to the workers. Without --model_dir the
# ranks use the built-in default model (a tiny FLUX.1-dev checkpoint with
# random weights, made once into a cache folder). The script's own ditctl
# calls reach the host at its --listen address (127.0.0.1 when it listens
# on every one), over TLS when the host has --tls_cert, verified by
# --tls_ca (default: that certificate, which works when it is self-signed
# and names the address), with $DITSERVE_TOKEN as their token when the host
# has --auth_token_file.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

world=2
grpc_port=50051
http_port=8000
metrics_port=9400
run_dir=""
tls_ca=""
rank_flags=()
while (($# > 0)); do
  case "$1" in
    --world) world=$2; shift 2 ;;
    --world=*) world=${1#*=}; shift ;;
    --grpc_port) grpc_port=$2; shift 2 ;;
    --grpc_port=*) grpc_port=${1#*=}; shift ;;
    --http_port) http_port=$2; shift 2 ;;
    --http_port=*) http_port=${1#*=}; shift ;;
    --metrics_port) metrics_port=$2; shift 2 ;;
    --metrics_port=*) metrics_port=${1#*=}; shift ;;
    --run_dir) run_dir=$2; shift 2 ;;
    --run_dir=*) run_dir=${1#*=}; shift ;;
    --tls_ca) tls_ca=$2; shift 2 ;;
    --tls_ca=*) tls_ca=${1#*=}; shift ;;
    -h|--help) sed -n '2,/^set /{/^#/p}' "$0"; exit 0 ;;
    *) rank_flags+=("$1"); shift ;;
  esac
done
if ! [[ "$world" =~ ^[1-9][0-9]*$ ]]; then
  echo "up.sh: --world $world must be a positive integer" >&2
  exit 2
fi

if [[ $(id -u) -eq 0 ]]; then
  deploy/install-deps.sh
fi
build_dir=${DITSERVE_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja >/dev/null
cmake --build "$build_dir" -j "$(nproc)" --target ditserve-host \
  ditserve-worker ditctl ditserve-make-checkpoint
bin="$(cd "$build_dir" && pwd)/bin"

# The workers exit on a flag they do not define (the host's --max_queue,
# say), so they get only the flags `ditserve-worker --helpfull` lists: its
# lines "    --name (", descriptions being indented further; a flag whose
# default is an unquoted true or false is a boolean. absl exits 1 after help.
declare -A kinds=()
read_flag_kinds() {  # read_flag_kinds ROLE BINARY: kinds[ROLE/name]=bool|value
  local line name=""
  while IFS= read -r line; do
    if [[ $line =~ ^\ {4}--([A-Za-z0-9_]+)\ \( ]]; then
      name=${BASH_REMATCH[1]}
      kinds[$1/$name]=value
    fi
    if [[ -n $name && $line =~ \ default:\ (true|false)\;$ ]]; then
      kinds[$1/$name]=bool
    fi
  done < <("$2" --helpfull 2>&1 || true)
  if [[ -z ${kinds[$1/model_dir]+set} ]]; then
    echo "up.sh: $2 --helpfull lists no --model_dir" >&2
    exit 1
  fi
}
# Splits rank_flags into host_flags and worker_flags by the flags each
# binary defines: --name=value, --name value (unless NAME is a boolean),
# --name and --noname, with one or two dashes as absl reads them. A flag
# neither defines goes to the host, which names it in its error.
split_rank_flags() {
  host_flags=()
  worker_flags=()
  local i arg name kind take
  for ((i = 0; i < ${#rank_flags[@]}; i++)); do
    arg=${rank_flags[i]}
    if [[ $arg != -* ]]; then
      host_flags+=("$arg")
      continue
    fi
    name=${arg#-}
    name=${name#-}
    name=${name%%=*}
    kind=${kinds[host/$name]-${kinds[worker/$name]-}}
    if [[ -z $kind && $name == no* ]]; then
      kind=${kinds[host/${name#no}]-${kinds[worker/${name#no}]-}}
      [[ $kind == bool ]] && name=${name#no}
    fi
    take=1
    if [[ $arg != *=* && $kind == value ]] && ((i + 1 < ${#rank_flags[@]})); then
      take=2
    fi
    if [[ -n ${kinds[worker/$name]+set} ]]; then
      worker_flags+=("${rank_flags[@]:i:take}")
    fi
    if [[ -n ${kinds[host/$name]+set} || -z ${kinds[worker/$name]+set} ]]; then
      host_flags+=("${rank_flags[@]:i:take}")
    fi
    i=$((i + take - 1))
  done
}
read_flag_kinds host "$bin/ditserve-host"
read_flag_kinds worker "$bin/ditserve-worker"
split_rank_flags

# The value a host flag was given last (--name=value, --name value, or with
# one dash, as absl takes them), if any.
host_flag() {
  local i value=""
  for ((i = 0; i < ${#host_flags[@]}; i++)); do
    case "${host_flags[i]}" in
      -"$1"=* | --"$1"=*) value=${host_flags[i]#*=} ;;
      -"$1" | --"$1") value=${host_flags[i + 1]-} ;;
    esac
  done
  echo "$value"
}
# Where a client on this machine reaches an address the host listens on.
local_address() {
  case "$1" in
    "" | 0.0.0.0 | :: | "[::]") echo 127.0.0.1 ;;
    *:*) [[ $1 == \[* ]] && echo "$1" || echo "[$1]" ;;
    *) echo "$1" ;;
  esac
}
address=$(local_address "$(host_flag listen)")
metrics_address=$(local_address "$(host_flag metrics_listen)")
[[ -n $(host_flag metrics_listen) ]] || metrics_address=$address
ditctl=("$bin/ditctl" "--server=$address:$grpc_port")
tls_cert=$(host_flag tls_cert)
if [[ -n $tls_cert ]]; then
  ditctl+=("--tls_ca=${tls_ca:-$tls_cert}")
fi
if [[ -n $(host_flag tls_client_ca) ]]; then
  echo "up.sh: the host's --tls_client_ca asks clients for a certificate," \
    "which up.sh's own ditctl calls do not have; start the host without it" >&2
  exit 2
fi

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for port in "$grpc_port" "$http_port" "$metrics_port"; do
  if port_in_use "$port"; then
    echo "up.sh: port $port is already in use (pass --grpc_port/--http_port/--metrics_port)" >&2
    exit 1
  fi
done
master_port=$((29500 + RANDOM % 20000))
while port_in_use "$master_port"; do master_port=$((master_port + 1)); done

run_dir=${run_dir:-$(mktemp -d /tmp/ditserve-run.XXXXXX)}
mkdir -p "$run_dir"
pids=()
stop_all() {
  trap - INT TERM EXIT
  echo
  echo "up.sh: stopping ${#pids[@]} ranks"
  # The host drains (up to --drain_timeout_s, 120 s by default), then shuts
  # the workers down; anything left after that and a margin is killed.
  kill -TERM "${pids[0]}" 2>/dev/null || true
  local give_up=$((SECONDS + 150)) alive
  while ((SECONDS < give_up)); do
    alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    ((alive == 0)) && break
    sleep 0.2
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop_all INT TERM EXIT

threads=$(( $(nproc) / world ))
((threads >= 1)) || threads=1
for ((rank = 0; rank < world; rank++)); do
  if ((rank == 0)); then
    binary=("$bin/ditserve-host" "--grpc_port=$grpc_port"
            "--http_port=$http_port" "--metrics_port=$metrics_port"
            "--threads=$threads" "${host_flags[@]}")
  else
    binary=("$bin/ditserve-worker" "--threads=$threads" "${worker_flags[@]}")
  fi
  RANK=$rank WORLD_SIZE=$world LOCAL_RANK=$rank MASTER_ADDR=127.0.0.1 \
    MASTER_PORT=$master_port "${binary[@]}" \
    >"$run_dir/rank-$rank.log" 2>&1 &
  pids+=($!)
done
echo "up.sh: started $world ranks (logs in $run_dir/rank-*.log)"

serving_deadline=$((SECONDS + 300))
while ((SECONDS < serving_deadline)); do
  if "${ditctl[@]}" --timeout=2 health >/dev/null 2>&1; then break; fi
  for pid in "${pids[@]}"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "up.sh: a rank exited during start-up; its log:" >&2
      for log in "$run_dir"/rank-*.log; do
        echo "== $log" >&2
        tail -n 20 "$log" >&2
      done
      exit 1
    fi
  done
  sleep 0.5
done
if ! "${ditctl[@]}" --timeout=5 health >/dev/null; then
  echo "up.sh: the host did not report SERVING within 300 s; see $run_dir" >&2
  exit 1
fi

# ditctl prints what it wrote: one file, or a video model's frames.
if ! made=$("${ditctl[@]}" generate "a lighthouse on a cliff at dusk" \
  -W 256 -H 256 --steps 4 --seed 1 -o "$run_dir/first.png"); then
  echo "up.sh: the first image failed (above); with --auth_token_file," \
    "export DITSERVE_TOKEN first; the logs are in $run_dir" >&2
  exit 1
fi
echo "up.sh: first image: $made"
scheme=http
[[ -n $tls_cert ]] && scheme=https
echo "up.sh: serving on $address:$grpc_port (gRPC)," \
  "$scheme://$address:$http_port/v1 (OpenAI Images API) and" \
  "http://$metrics_address:$metrics_port/metrics; Ctrl-C stops every rank"
wait "${pids[0]}"
