# Sourced by the benchmark scripts: start_one_rank_host CHECKPOINT starts
# ditserve-host as a one-rank group on CHECKPOINT (2 intra-op threads, no
# memory limit) on a random loopback port and waits until it serves. It sets
# `host` (its pid), `run_dir` (a scratch folder, removed with the host at
# exit) and `ditctl` (the client command, pointed at it). Needs `bin`.

start_one_rank_host() {
  local checkpoint=$1
  local port=$((30000 + RANDOM % 20000))
  run_dir=$(mktemp -d)
  RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 \
    MASTER_PORT=$((port + 2)) "$bin/ditserve-host" --grpc_port=$port \
    --metrics_port=$((port + 1)) --threads=2 --model_dir="$checkpoint" \
    --max_request_bytes=0 >"$run_dir/host.log" 2>&1 &
  host=$!
  trap 'kill $host 2>/dev/null; wait $host 2>/dev/null; rm -rf "$run_dir"' EXIT
  ditctl=("$bin/ditctl" "--server=127.0.0.1:$port")
  for _ in $(seq 120); do
    "${ditctl[@]}" --timeout=2 health >/dev/null 2>&1 && return 0
    sleep 1
  done
  echo "ditserve-host did not serve within 120 s; its log:" >&2
  cat "$run_dir/host.log" >&2
  return 1
}
