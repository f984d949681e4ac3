#!/usr/bin/env bash
# check_layering.sh on small checkouts: a clean one passes; each kind of
# violation fails and is named.
set -euo pipefail
check="$(cd "$(dirname "$0")" && pwd)/check_layering.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A git checkout named $1 holding the FILE CONTENT pairs that follow, added
# to the index (check_layering reads the files git tracks).
make_checkout() {
  local dir="$work/$1"
  shift
  mkdir -p "$dir"
  git -C "$dir" init -q
  while (($# > 0)); do
    mkdir -p "$dir/$(dirname "$1")"
    printf '%s\n' "$2" >"$dir/$1"
    shift 2
  done
  git -C "$dir" add -A
  echo "$dir"
}

expect() {  # expect PASS|FAIL NEEDLE DIR
  local output status=0
  output=$("$check" "$3" 2>&1) || status=$?
  if [[ $1 == PASS && $status -ne 0 ]] || [[ $1 == FAIL && $status -eq 0 ]]; then
    echo "expected $1 for $3, got exit $status: $output" >&2
    exit 1
  fi
  if [[ -n $2 && $output != *"$2"* ]]; then
    echo "expected \"$2\" in: $output" >&2
    exit 1
  fi
}

clean=$(make_checkout clean \
  core/models/vae/a.h '#include "core/models/layers/b.h"' \
  core/families/flux/f.cc '#include "core/families/family.h"' \
  core/parallel/p.cc '#include "core/models/layers/b.h"' \
  server/s.cc '#include "core/engine/e.h"' \
  bench/x.cc '#include "tools/local_cluster/c.h"' \
  tests/unit/t.cc '#include "server/s.h"')
expect PASS "every include follows" "$clean"

upward=$(make_checkout upward core/models/a.h '#include "core/parallel/p.h"')
expect FAIL "core/models may not depend on core/parallel" "$upward"

families=$(make_checkout families \
  core/families/sd3/s.cc '#include "core/families/pixart/p.h"')
expect FAIL "core/families/sd3 may not depend on core/families/pixart" "$families"

interface=$(make_checkout interface \
  core/families/family.h '#include "core/families/flux/f.h"')
expect FAIL "core/families may not depend on core/families/flux" "$interface"

peers=$(make_checkout peers server/s.cc '#include "worker/w.h"')
expect FAIL "server may not depend on worker" "$peers"

bench=$(make_checkout bench bench/b.cc '#include "tests/support/t.h"')
expect FAIL "bench may not depend on tests" "$bench"

grpc=$(make_checkout grpc core/engine/e.cc '#include "grpcpp/grpcpp.h"')
expect FAIL "never includes gRPC service code" "$grpc"

link=$(make_checkout link \
  tools/local_cluster/CMakeLists.txt 'add_library(ditserve_serving_cluster STATIC c.cc)' \
  worker/CMakeLists.txt 'target_link_libraries(w PRIVATE ditserve_serving_cluster)')
expect FAIL "names ditserve_serving_cluster" "$link"

echo "check_layering_test: 8 checkouts judged as expected"
