#!/usr/bin/env bash
# Fails on an #include that runs against the dependency order of DESIGN.md,
#   base -> config, io, tokenizers, video -> dist, models, schedulers
#        -> parallel, checkpoints -> families (the interface, then each
#        family's folder) -> engine -> server, worker, clients -> tools
#        -> bench
# (a folder includes only folders before it, and itself; one family's folder
# never includes another's), on core/ including
# gRPC service code or prometheus-cpp, and on a production binary's folder
# (server/, worker/, clients/, core/) linking a library of tools/ or tests/.
# Usage: tests/check_layering.sh [CHECKOUT]   (default: the one holding it)
set -euo pipefail
cd "$(git -C "${1:-$(dirname "$0")}" rev-parse --show-toplevel)"

# The layer of a project path ("core/models/vae/x.h" -> 2), or nothing for
# paths outside the order (tests/, generated protos).
layer_of() {
  case "$1" in
    core/base/*) echo 0 ;;
    core/config/* | core/io/* | core/tokenizers/* | core/video/*) echo 1 ;;
    core/dist/* | core/models/* | core/schedulers/*) echo 2 ;;
    core/parallel/* | core/checkpoints/*) echo 3 ;;
    core/families/*/*) echo 5 ;;
    core/families/*) echo 4 ;;
    core/engine/*) echo 6 ;;
    server/* | worker/* | clients/*) echo 7 ;;
    tools/*) echo 8 ;;
    bench/*) echo 9 ;;
    tests/*) echo 10 ;;
  esac
}

# "core/models/vae/x.h" -> "core/models"; "core/families/flux/x.h" ->
# "core/families/flux"; "server/x.h" -> "server".
folder_of() {
  case "$1" in
    core/families/*/*) echo "$1" | cut -d/ -f1-3 ;;
    core/*) echo "$1" | cut -d/ -f1-2 ;;
    *) echo "$1" | cut -d/ -f1 ;;
  esac
}

violations=()
while IFS= read -r file; do
  from_layer=$(layer_of "$file")
  [[ -n "$from_layer" && "$from_layer" -lt 10 ]] || continue
  from_folder=$(folder_of "$file")
  while IFS= read -r included; do
    to_layer=$(layer_of "$included")
    [[ -n "$to_layer" ]] || continue
    to_folder=$(folder_of "$included")
    [[ "$to_folder" == "$from_folder" ]] && continue
    if ((to_layer >= from_layer)); then
      violations+=("$file includes $included ($from_folder may not depend on $to_folder)")
    fi
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
  if [[ "$from_folder" == core/* ]]; then
    while IFS= read -r included; do
      violations+=("$file includes $included (core/ never includes gRPC service code or prometheus-cpp)")
    done < <(sed -n 's/^#include [<"]\(grpcpp\/[^">]*\|[^">]*\.grpc\.pb\.h\|prometheus\/[^">]*\)[">].*/\1/p' "$file")
  fi
done < <(git ls-files -- '*.cc' '*.h')

# Libraries defined under tools/ and tests/ must not reach the production
# binaries: their folders may not name them.
mapfile -t test_tool_libraries < <(
  git ls-files -- 'tools/*CMakeLists.txt' 'tests/*CMakeLists.txt' |
    xargs sed -n 's/^ *add_library(\([A-Za-z0-9_]*\).*/\1/p')
for library in "${test_tool_libraries[@]}"; do
  while IFS= read -r user; do
    violations+=("$user names $library, a library of tools/ or tests/")
  done < <(git ls-files -- 'core/*CMakeLists.txt' 'server/*CMakeLists.txt' \
    'worker/*CMakeLists.txt' 'clients/*CMakeLists.txt' |
    xargs grep -lw -- "$library" || true)
done

if ((${#violations[@]} > 0)); then
  printf 'check_layering: %s\n' "${violations[@]}" >&2
  exit 1
fi
echo "check_layering: every include follows the dependency order"
