# Sourced by the benchmark scripts: start_one_rank_host CHECKPOINT [FLAG...]
# starts ditserve-host as a one-rank group on CHECKPOINT (2 intra-op
# threads, no memory limit, then the FLAGs) on a random loopback port and
# waits until it serves. It sets `host` (its pid), `run_dir` (a scratch
# folder) and `ditctl` (the client command, pointed at it). Needs `bin`.
# stop_one_rank_host ends both, at exit or before. `bench_scratch` is a
# folder for the script's own files, removed at exit however it exits.

# Stops the host and removes its scratch folder; nothing here fails, so that
# a script under `set -e` exits with its own status rather than the killed
# host's 143.
stop_one_rank_host() {
  [[ -n ${host:-} ]] || return 0
  kill "$host" 2>/dev/null || true
  wait "$host" 2>/dev/null || true
  rm -rf "$run_dir"
  host=
}

bench_scratch=$(mktemp -d)
trap 'stop_one_rank_host; rm -rf "$bench_scratch"' EXIT

start_one_rank_host() {
  local checkpoint=$1
  shift
  local port=$((30000 + RANDOM % 20000))
  run_dir=$(mktemp -d)
  RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 \
    MASTER_PORT=$((port + 2)) "$bin/ditserve-host" --grpc_port=$port \
    --metrics_port=$((port + 1)) --threads=2 --model_dir="$checkpoint" \
    --max_request_bytes=0 "$@" >"$run_dir/host.log" 2>&1 &
  host=$!
  ditctl=("$bin/ditctl" "--server=127.0.0.1:$port")
  for _ in $(seq 120); do
    "${ditctl[@]}" --timeout=2 health >/dev/null 2>&1 && return 0
    sleep 1
  done
  echo "ditserve-host did not serve within 120 s; its log:" >&2
  cat "$run_dir/host.log" >&2
  return 1
}
