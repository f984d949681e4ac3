#!/usr/bin/env bash
# Builds the committed tree against LibTorch 2.x and runs its tests, on the
# CPU: Debian 13's libtorch-dev (LibTorch 2.6) in a Debian 13 chroot that
# debootstrap makes. What the CUDA build compiles differently from Debian
# 12's LibTorch 1.13 runs here without a GPU: attention through
# scaled_dot_product_attention, at::rms_norm, and c10d's Backend API under
# every multi-process test's Gloo groups.
#
#   deploy/gpu/torch2_cpu_check.sh [--root DIR] [--jobs N] [CTEST_ARG ...]
#
#   --root     the chroot, made once and kept (default /srv/ditserve-trixie,
#              about 4 GB with the build)
#   CTEST_ARG  what ctest gets (default: every test, the end-to-end ones
#              with their real Prometheus, Node.js clients and Python client
#              included, but the two checks of Debian 12's package names:
#              deploy/docker/Dockerfile's runtime packages and
#              install-deps.sh --from, which no Debian 13 machine can pass)
#
# Needs root, debootstrap, apt access to deb.debian.org, npm access to its
# registry (the end-to-end tests' packages, tests/e2e/package-lock.json) and
# the packages deploy/install-deps.sh installs (the chroot takes grpc-proto's
# health.proto from this machine: Debian 13 does not package it). HEAD is
# what is built: commit first.
set -euo pipefail

usage() {
  echo "usage: deploy/gpu/torch2_cpu_check.sh [--root DIR] [--jobs N]" \
    "[CTEST_ARG ...]" >&2
  exit 2
}

repo=$(cd "$(dirname "$0")/../.." && pwd)
root=/srv/ditserve-trixie
jobs=$(nproc)
while (($# > 0)); do
  case "$1" in
    --root) root=${2:?}; shift 2 ;;
    --jobs) jobs=${2:?}; shift 2 ;;
    --help) usage ;;
    *) break ;;
  esac
done
ctest_args=("$@")
if ((${#ctest_args[@]} == 0)); then
  ctest_args=(-E '^ops/(dockerfile|gpu_build_scripts)$')
fi
for tool in debootstrap chroot git npm; do
  if ! command -v "$tool" >/dev/null; then
    echo "torch2_cpu_check.sh: needs $tool (apt-get install $tool)" >&2
    exit 1
  fi
done
health_proto=/usr/share/grpc-proto/grpc/health/v1/health.proto
if [[ ! -f $health_proto ]]; then
  echo "torch2_cpu_check.sh: needs $health_proto (deploy/install-deps.sh)" >&2
  exit 1
fi

# What the build and the tests need, as Debian 13 names it: what
# deploy/install-deps.sh installs but the fuzzers' clang and clang-format
# (tests/run.sh's, not ctest's).
packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libtorch-dev libopenblas0-pthread libdnnl-dev libgloo-dev ocl-icd-opencl-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev prometheus-cpp-dev libspdlog-dev libfmt-dev nlohmann-json3-dev
  libsentencepiece-dev libpng-dev libre2-dev libicu-dev
  libavcodec-dev libavformat-dev libavutil-dev libswscale-dev
  libturbojpeg0-dev libwebp-dev libcpp-httplib-dev libssl-dev
  libgtest-dev libgmock-dev
  python3-grpcio python3-protobuf openssl ffmpeg sentencepiece iproute2
  prometheus curl nodejs systemd python3-yaml libfaketime
)

started=$(date +%s)
stamp() { echo "=== [$(($(date +%s) - started)) s] $*"; }

if [[ ! -x $root/usr/bin/apt-get ]]; then
  stamp "debootstrap trixie into $root"
  debootstrap --variant=minbase trixie "$root" http://deb.debian.org/debian
fi
# The multi-node tests make network namespaces (`ip -n` remounts / as a
# slave, so the root must be a mount point) on veth and tun devices.
if ! mountpoint -q "$root"; then
  mount --rbind "$root" "$root"
  mount --make-rslave "$root"
fi
mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
mountpoint -q "$root/sys" || mount -t sysfs sysfs "$root/sys"
if ! mountpoint -q "$root/dev"; then
  mount --rbind /dev "$root/dev"
  mount --make-rslave "$root/dev"
fi
mountpoint -q "$root/run" || mount -t tmpfs tmpfs "$root/run"
in_root() { chroot "$root" env DEBIAN_FRONTEND=noninteractive bash -c "$1"; }

stamp "packages"
in_root "apt-get update -q >/dev/null &&
  apt-get install -y -q --no-install-recommends ${packages[*]} >/dev/null"
mkdir -p "$root/usr/share/grpc-proto/grpc/health/v1"
cp "$health_proto" "$root/usr/share/grpc-proto/grpc/health/v1/"

stamp "the tree at $(git -C "$repo" rev-parse --short HEAD)"
src=$root/src/ditserve
[[ -d $src/.git ]] || git init -q "$src"
git -C "$src" fetch -q "$repo" HEAD
git -C "$src" checkout -q -f FETCH_HEAD

# By this machine's npm, with its registry, proxy and certificate settings,
# which the chroot does not have; the packages are JavaScript alone.
stamp "the end-to-end tests' npm packages"
(cd "$src/tests/e2e" && npm ci --no-audit --no-fund --loglevel=error)

stamp "building against $(in_root "dpkg-query -W -f '\${Version}' libtorch-dev")"
in_root "cd /src/ditserve &&
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build build -j $jobs"

stamp "ctest ${ctest_args[*]}"
printf -v quoted ' %q' "${ctest_args[@]}"
in_root "cd /src/ditserve && ctest --test-dir build --output-on-failure \
  -j $jobs$quoted"
stamp finished
