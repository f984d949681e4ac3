#!/usr/bin/env bash
# The shared libraries ditserve-host loads that deploy/gpu/pack_debs.sh's
# packages leave out (FFmpeg's codecs and their own dependencies), copied
# from this Debian 12 machine into one archive for check.sh --runtime-libs
# on a GPU machine of another distribution: with build.sh --deps the
# binaries build there, but the host cannot start without them. LibTorch's
# libraries, the C and C++ runtimes and OpenMP stay that machine's own
# (LibTorch brings its OpenMP; a second one in the process crashes it).
#
#   deploy/gpu/pack_runtime_libs.sh HOST DEBS_DIR ARCHIVE.tar.xz
#
# HOST is a ditserve-host built here (build/bin/ditserve-host), DEBS_DIR
# pack_debs.sh's folder. About 31 MiB.
set -euo pipefail

usage() {
  echo "usage: deploy/gpu/pack_runtime_libs.sh HOST DEBS_DIR ARCHIVE.tar.xz" >&2
  exit 2
}
(($# == 3)) && [[ -n "$1" && -n "$2" && -n "$3" ]] || usage
host=$1
debs=$2
archive=$(realpath -m "$3")
[[ -x "$host" ]] || { echo "pack_runtime_libs.sh: $host is not a program" >&2; exit 2; }
if ! compgen -G "$debs/*.deb" >/dev/null; then
  echo "pack_runtime_libs.sh: $debs holds no .deb files" >&2
  exit 2
fi
libdir=/usr/lib/x86_64-linux-gnu

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# The libraries the packages hold, by file name.
for deb in "$debs"/*.deb; do
  dpkg-deb -c "$deb" |
    awk '{name = ($(NF - 1) == "->") ? $(NF - 2) : $NF} name ~ /\.so/ {print name}' |
    xargs -r -n1 basename
done | sort -u >"$scratch/packed"
# What the host loads but LibTorch (Debian's here, the GPU machine's there).
readelf -d "$host" | awk '/\(NEEDED\)/ {gsub(/[][]/, "", $5); print $5}' |
  grep -Ev '^lib(torch|c10|dnnl)' >"$scratch/roots"
while read -r name; do
  [[ -f "$libdir/$name" ]] || { echo "missing $name"; continue; }
  echo "$libdir/$name"
  ldd "$libdir/$name" | awk '$3 ~ /^\// {print $3} /not found/ {print "missing " $1}'
done <"$scratch/roots" | sort -u >"$scratch/closure"
if grep '^missing ' "$scratch/closure" >&2; then
  echo "pack_runtime_libs.sh: libraries above are not installed here" \
    "(deploy/install-deps.sh installs them)" >&2
  exit 1
fi
mkdir "$scratch/libs"
while read -r path; do
  name=$(basename "$path")
  case "$name" in
    libc.so.* | libm.so.* | libstdc++.so.* | libgcc_s.so.* | libgomp.so.* | \
      libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.* | ld-linux*) continue ;;
  esac
  grep -qxF "$name" "$scratch/packed" || cp -L "$path" "$scratch/libs/"
done <"$scratch/closure"
mkdir -p "$(dirname "$archive")"
tar -C "$scratch/libs" -cJf "$archive" .
echo "pack_runtime_libs.sh: $(ls "$scratch/libs" | wc -l) libraries," \
  "$(du -h "$archive" | cut -f1) in $archive"
