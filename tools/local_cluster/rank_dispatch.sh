#!/bin/sh
# Starts ditserve-host for rank 0 (with $DITSERVE_HOST_ARGS) and
# ditserve-worker for the other ranks (with $DITSERVE_WORKER_ARGS after the
# common arguments), so that RankLauncher can start a serving group with one
# program.
# shellcheck disable=SC2086  # the role's arguments are split on purpose
if [ "$RANK" = "0" ]; then
  exec "$DITSERVE_HOST" $DITSERVE_HOST_ARGS "$@"
fi
exec "$DITSERVE_WORKER" "$@" $DITSERVE_WORKER_ARGS
