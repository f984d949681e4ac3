#!/usr/bin/env bash
# Runs deploy/docker/entrypoint.sh against stand-in binaries that print their
# arguments and torchrun variables, and fails unless it maps LeaderWorkerSet's
# variables for the leader and a worker, keeps variables already set, passes
# the flags through unchanged and refuses an unknown role.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
entrypoint="${root}/deploy/docker/entrypoint.sh"
bin_dir=$(mktemp -d)
trap 'rm -rf "${bin_dir}"' EXIT
for binary in ditserve-host ditserve-worker; do
  cat >"${bin_dir}/${binary}" <<EOF
#!/bin/sh
echo "${binary}"
for v in RANK WORLD_SIZE MASTER_ADDR MASTER_PORT LOCAL_RANK; do
  eval "echo \$v=\\\${\$v-unset}"
done
for a in "\$@"; do echo "arg=\$a"; done
EOF
  chmod +x "${bin_dir}/${binary}"
done

failures=0
# run_case NAME WANT_STATUS WANT ENV... -- ENTRYPOINT_ARGS...: WANT_STATUS ok
# compares the whole output with WANT; refused wants a non-zero exit and
# WANT somewhere in the output.
run_case() {
  local name=$1 want_status=$2 want=$3
  shift 3
  local env=()
  while [[ $1 != -- ]]; do env+=("$1"); shift; done
  shift
  local got status=0
  got=$(env -i PATH=/usr/bin:/bin DITSERVE_BIN_DIR="${bin_dir}" "${env[@]}" \
    sh "${entrypoint}" "$@" 2>&1) || status=$?
  local pass=1
  if [[ ${want_status} == ok ]]; then
    [[ ${status} -eq 0 && "${got}" == "${want}" ]] || pass=0
  else
    [[ ${status} -ne 0 && "${got}" == *"${want}"* ]] || pass=0
  fi
  if ((pass)); then
    echo "ok   ${name}"
  else
    echo "FAIL ${name}: exit ${status}, output"$'\n'"${got}"$'\n'"want" \
      "(${want_status})"$'\n'"${want}" >&2
    failures=$((failures + 1))
  fi
}

lws=(LWS_LEADER_ADDRESS=ditserve-0.ditserve.default LWS_GROUP_SIZE=4)
run_case "leader maps LWS to rank 0" ok "ditserve-host
RANK=0
WORLD_SIZE=4
MASTER_ADDR=ditserve-0.ditserve.default
MASTER_PORT=29500
LOCAL_RANK=0
arg=--model_dir=/models/a b
arg=--ulysses_degree=4" \
  "${lws[@]}" LWS_WORKER_INDEX=0 -- host "--model_dir=/models/a b" \
  --ulysses_degree=4

run_case "worker maps LWS_WORKER_INDEX to its rank" ok "ditserve-worker
RANK=3
WORLD_SIZE=4
MASTER_ADDR=ditserve-0.ditserve.default
MASTER_PORT=29500
LOCAL_RANK=0" \
  "${lws[@]}" LWS_WORKER_INDEX=3 -- worker

run_case "variables already set win" ok "ditserve-worker
RANK=2
WORLD_SIZE=8
MASTER_ADDR=10.0.0.1
MASTER_PORT=30000
LOCAL_RANK=1" \
  "${lws[@]}" LWS_WORKER_INDEX=3 RANK=2 WORLD_SIZE=8 MASTER_ADDR=10.0.0.1 \
  MASTER_PORT=30000 LOCAL_RANK=1 -- worker

run_case "without LWS nothing is set" ok "ditserve-host
RANK=unset
WORLD_SIZE=unset
MASTER_ADDR=unset
MASTER_PORT=unset
LOCAL_RANK=unset" \
  -- host

run_case "LWS without a worker index is refused" refused \
  "LWS_LEADER_ADDRESS is set but LWS_WORKER_INDEX is not" \
  "${lws[@]}" -- worker

run_case "unknown role is refused" refused \
  "usage: ditserve-entrypoint host|worker [flag...]" -- leader

if ((failures > 0)); then
  echo "check_entrypoint: ${failures} case(s) failed" >&2
  exit 1
fi
echo "ok: the entrypoint maps LeaderWorkerSet's variables"
