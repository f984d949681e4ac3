#!/bin/sh
# Starts ditserve-host for rank 0 (with $DITSERVE_HOST_ARGS) and
# ditserve-worker for the other ranks, so that RankLauncher can start a
# serving group with one program.
if [ "$RANK" = "0" ]; then
  # shellcheck disable=SC2086  # the host arguments are split on purpose
  exec "$DITSERVE_HOST" $DITSERVE_HOST_ARGS "$@"
fi
exec "$DITSERVE_WORKER" "$@"
