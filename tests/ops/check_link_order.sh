#!/usr/bin/env bash
# Each binary named loads libstdc++ before any other library (CMakeLists.txt,
# add_link_options): PyTorch's wheels export copies of parts of libstdc++,
# and whichever library comes first in a binary's list serves its calls.
#
#   tests/ops/check_link_order.sh BINARY...
set -euo pipefail

(($# > 0)) || { echo "usage: check_link_order.sh BINARY..." >&2; exit 2; }
failures=0
for binary in "$@"; do
  # The sanitizers' runtimes, which the compiler driver names first, aside.
  # awk reads to the end: leaving early would fail readelf with SIGPIPE.
  first=$(readelf -d "$binary" | awk '/\(NEEDED\)/ && !found {
    gsub(/[][]/, "", $5); if ($5 !~ /^lib(asan|ubsan)\./) {print $5; found = 1}}')
  if [[ "$first" == libstdc++.so.* ]]; then
    echo "ok   $(basename "$binary"): $first first"
  else
    echo "FAIL $(basename "$binary"): its first library is $first, not libstdc++"
    failures=$((failures + 1))
  fi
done
((failures == 0))
