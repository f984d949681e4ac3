#!/usr/bin/env bash
# Each binary named takes libstdc++'s own definitions (CMakeLists.txt,
# add_link_options): PyTorch's wheels export copies of parts of libstdc++,
# and the linker binds a binary's references to the first library that
# defines them, as the loader serves calls from the first it loaded. So:
#   - libstdc++ is the binary's first library, and
#   - every symbol it takes from outside that libstdc++ also defines carries
#     a symbol version (libstdc++'s GLIBCXX_ or CXXABI_): a reference
#     without one was bound to another library's copy.
#
#   tests/ops/check_link_order.sh [--libstdcxx FILE] BINARY...
#
# --libstdcxx: the libstdc++.so.6 whose symbols count (default: the one
# c++ links with).
set -euo pipefail

usage() {
  echo "usage: check_link_order.sh [--libstdcxx FILE] BINARY..." >&2
  exit 2
}
libstdcxx=""
if [[ ${1:-} == --libstdcxx ]]; then
  (($# >= 2)) || usage
  libstdcxx=$2
  shift 2
fi
(($# > 0)) || usage
[[ -n "$libstdcxx" ]] || libstdcxx=$(c++ -print-file-name=libstdc++.so.6)
[[ -f "$libstdcxx" ]] ||
  { echo "check_link_order.sh: no libstdc++ at $libstdcxx" >&2; exit 2; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export LC_ALL=C  # one order for sort and comm
# The sanitizers' runtimes, which the compiler driver names first.
sanitizer_runtime='^lib(asan|ubsan|tsan|lsan)\.'
# FILE's defined dynamic symbols: readelf's 8th field, its @VERSION dropped.
defined() {
  readelf --dyn-syms -W "$1" |
    awk '$7 != "UND" && $8 != "" {sub(/@.*/, "", $8); print $8}' | sort -u
}
defined "$libstdcxx" >"$scratch/libstdcxx"
failures=0
for binary in "$@"; do
  name=$(basename "$binary")
  readelf -d "$binary" |
    awk '/\(NEEDED\)/ {gsub(/[][]/, "", $5); print $5}' >"$scratch/needed"
  first=$(grep -vE -m 1 "$sanitizer_runtime" "$scratch/needed" || true)
  readelf --dyn-syms -W "$binary" |
    awk '$7 == "UND" && $8 != "" && $8 !~ /@/ {print $8}' |
    sort -u >"$scratch/unversioned"
  # A sanitizer's runtime replaces operator new and delete and intercepts
  # exceptions by design: what it defines is its own.
  : >"$scratch/runtimes"
  while read -r runtime; do
    path=$(c++ -print-file-name="$runtime")
    [[ ! -f "$path" ]] || defined "$path" >>"$scratch/runtimes"
  done < <(grep -E "$sanitizer_runtime" "$scratch/needed" || true)
  sort -u -o "$scratch/runtimes" "$scratch/runtimes"
  copies=$(comm -12 "$scratch/unversioned" "$scratch/libstdcxx" |
    comm -23 - "$scratch/runtimes")
  problems=()
  [[ "$first" == libstdc++.so.* ]] ||
    problems+=("its first library is ${first:-none}, not libstdc++")
  if [[ -n "$copies" ]]; then
    problems+=("$(wc -l <<<"$copies") of libstdc++'s symbols without its version, from another library's copies, such as $(head -n 3 <<<"$copies" | c++filt | paste -sd ';' -)")
  fi
  if ((${#problems[@]} == 0)); then
    echo "ok   $name: $first first, libstdc++'s symbols from libstdc++"
  else
    echo "FAIL $name:"
    printf '  %s\n' "${problems[@]}"
    failures=$((failures + 1))
  fi
done
((failures == 0))
