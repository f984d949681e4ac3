#!/bin/sh
# Entrypoint of the ditserve images: one image, two roles.
#
#   ditserve-entrypoint host|worker [flag...]
#
# execs ditserve-host (rank 0) or ditserve-worker (ranks > 0) with the flags.
# Under a Kubernetes LeaderWorkerSet the ranks find each other through the
# variables LWS sets in every pod (LWS_LEADER_ADDRESS, LWS_GROUP_SIZE,
# LWS_WORKER_INDEX, 0 on the leader); ditserve reads torchrun's, so they are
# mapped here. A variable already set (or a --rank/--master_addr/... flag,
# which the binaries prefer) wins, so the image also runs under any other
# launcher that sets the torchrun variables itself.
set -eu

usage() {
  echo "usage: ditserve-entrypoint host|worker [flag...]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
case "$1" in
  host) binary=ditserve-host ;;
  worker) binary=ditserve-worker ;;
  *) usage ;;
esac
shift

if [ -n "${LWS_LEADER_ADDRESS:-}" ]; then
  : "${MASTER_ADDR:=$LWS_LEADER_ADDRESS}"
  # The leader's rendezvous port; the manifests expose it on the leader pod.
  : "${MASTER_PORT:=29500}"
  : "${WORLD_SIZE:=${LWS_GROUP_SIZE:?LWS_LEADER_ADDRESS is set but LWS_GROUP_SIZE is not}}"
  : "${RANK:=${LWS_WORKER_INDEX:?LWS_LEADER_ADDRESS is set but LWS_WORKER_INDEX is not}}"
  # One rank per pod, so each rank is the first (and only) on its machine.
  : "${LOCAL_RANK:=0}"
  export MASTER_ADDR MASTER_PORT WORLD_SIZE RANK LOCAL_RANK
fi

# DITSERVE_BIN_DIR lets the same script run binaries installed elsewhere.
exec "${DITSERVE_BIN_DIR:-/opt/ditserve/bin}/$binary" "$@"
