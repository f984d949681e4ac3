#!/usr/bin/env bash
# Installs everything ditserve needs to build, test and run its demo on Debian 12.
# Idempotent: packages already present are skipped and `apt-get update` only runs
# when something is missing. Run as root.
#
# For machines with no package registry (e.g. GPU clusters):
#   install-deps.sh --download DIR   on a Debian 12 machine with apt access (no
#                                    root needed), fetches into DIR the .deb files
#                                    a bare Debian 12 needs
#   install-deps.sh --from DIR       on the target, installs from DIR alone
set -euo pipefail

usage() {
  echo "usage: $0 [--download DIR | --from DIR]" >&2
  exit 2
}

mode=apt
dir=
if (($# > 0)); then
  case $1 in
    --download | --from) mode=${1#--} ;;
    *) usage ;;
  esac
  if (($# != 2)) || [[ -z $2 ]]; then
    usage
  fi
  dir=$2
  if [[ $mode == from && ! -d $dir ]]; then
    echo "install-deps: no such directory: ${dir}" >&2
    usage
  fi
fi

packages=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config clang-format git
  # the fuzz targets (tests/fuzz): clang with libFuzzer and the sanitizers
  clang libclang-rt-dev
  # libraries
  libtorch-dev libopenblas0-pthread libdnnl-dev libgloo-dev
  # dnnl's CMake config looks for OpenCL (Debian builds oneDNN with its OpenCL
  # GPU runtime) and fails the configure without it; libdnnl-dev only
  # recommends it, and recommends are not installed here
  ocl-icd-opencl-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler grpc-proto
  libabsl-dev prometheus-cpp-dev libspdlog-dev libfmt-dev nlohmann-json3-dev
  libsentencepiece-dev sentencepiece libpng-dev libre2-dev libicu-dev
  libavcodec-dev libavformat-dev libavutil-dev libswscale-dev
  libturbojpeg0-dev libwebp-dev
  libcpp-httplib-dev libssl-dev
  libgtest-dev libgmock-dev
  # end-to-end tests: a real Prometheus and a real gRPC reflection client (Node.js)
  prometheus curl
  # certificates for the TLS tests (server and Python client)
  openssl
  # ffprobe and ffmpeg check the MP4 files core/video writes
  ffmpeg
  # tests/unit: waits under a wall clock an hour ahead of the kernel's
  libfaketime
  # the Python client (clients/python)
  python3-grpcio python3-protobuf
  # tests/ops checks of deploy/: systemd-analyze verifies the systemd units,
  # Python's yaml module reads the Kubernetes manifests
  systemd python3-yaml
)
# Node.js may come from elsewhere (e.g. NodeSource, which conflicts with Debian's npm).
# A download is for another, bare machine, so what this one has does not count.
if [[ $mode == download ]] || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

if [[ $mode == download ]]; then
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  empty_status=$(mktemp)
  trap 'rm -f "$empty_status"' EXIT
  # Resolving against an empty dpkg status gives the closure a bare machine
  # needs, with alternatives chosen the way apt would choose them there. With
  # the cache files off, apt does not save that view over this machine's cache.
  plan=$(apt-get -s -q -o Dir::State::status="$empty_status" \
    -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= \
    --no-install-recommends install "${packages[@]}")
  mapfile -t closure < <(awk '$1 == "Inst" { print $2 "=" substr($3, 2) }' <<<"$plan")
  # The required packages stay in: every Debian has them, but often older
  # versions than the rest needs (perl wants perl-base of its own version).
  mapfile -t wanted < <(apt-cache show "${closure[@]}" | awk -v RS= -F '\n' '
    {
      name = ""; version = ""; size = 0
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^Package: /) name = substr($i, 10)
        else if ($i ~ /^Version: /) version = substr($i, 10)
        else if ($i ~ /^Size: /) size = substr($i, 7)
      }
      if (!seen[name]++) print name "=" version, size
    }')
  (cd "$dir" && apt-get download -q "${wanted[@]%% *}")
  printf '%s\n' "${packages[@]}" >"${dir}/packages.txt"
  printf '%s\n' "${wanted[@]##* }" | awk -v n="${#wanted[@]}" -v dir="$dir" '
    { bytes += $1 }
    END { printf "install-deps: %s holds the %d .deb files (%.0f MiB)\n", dir, n, bytes / 1048576 }'
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} > 0)); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "install-deps: missing packages (${missing[*]}); run as root" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if [[ $mode == from ]]; then
    dir=$(cd "$dir" && pwd)
    # Catches a folder downloaded for an older package list before apt's
    # vaguer "unable to locate package".
    for p in "${missing[@]}"; do
      if ! grep -qxF -- "$p" "${dir}/packages.txt" 2>/dev/null; then
        echo "install-deps: ${dir} has no download of ${p}; run" \
          "install-deps.sh --download DIR on a Debian 12 machine with apt access" >&2
        exit 1
      fi
    done
    # --with-source makes the .deb files candidates without asking for all of
    # them, so apt installs only what the missing packages need. With no
    # sources configured, the folder is all apt can install from: it never
    # goes to the network, nor prefers versions from stale apt lists. Not
    # --no-download: apt 2.6 then fails on local .deb files ("Pathname to
    # install is not absolute").
    sources=()
    for deb in "$dir"/*.deb; do
      if [[ -e $deb ]]; then
        sources+=(--with-source "$deb")
      fi
    done
    no_sources=$(mktemp -d)
    trap 'rmdir "$no_sources"' EXIT
    if ! apt-get install -y -q --no-install-recommends \
      -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$no_sources" \
      -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= \
      "${sources[@]}" "${missing[@]}"; then
      echo "install-deps: apt could not install ${missing[*]} from the .deb files" \
        "in ${dir} alone; download them again on a Debian 12 machine with apt" \
        "access: install-deps.sh --download DIR" >&2
      exit 1
    fi
  else
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
elif [[ $mode == from ]]; then
  echo "install-deps: nothing missing; ${dir} not needed"
fi

# LibTorch's matmul is ~30x slower on Debian's reference BLAS: prefer OpenBLAS.
for alt in libblas.so.3 liblapack.so.3; do
  target=$(update-alternatives --list "${alt}-x86_64-linux-gnu" 2>/dev/null |
    grep openblas-pthread | head -n 1 || true)
  if [[ -n "$target" && $(id -u) -eq 0 ]]; then
    update-alternatives --set "${alt}-x86_64-linux-gnu" "$target" >/dev/null
  fi
done
