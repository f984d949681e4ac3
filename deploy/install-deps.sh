#!/usr/bin/env bash
# Installs everything ditserve needs to build, test and run its demo on Debian 12.
# Idempotent: packages already present are skipped and `apt-get update` only runs
# when something is missing. Run as root.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config clang-format git
  # the fuzz targets (tests/fuzz): clang with libFuzzer and the sanitizers
  clang libclang-rt-dev
  # libraries
  libtorch-dev libopenblas0-pthread libgloo-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler grpc-proto
  libabsl-dev prometheus-cpp-dev libspdlog-dev libfmt-dev nlohmann-json3-dev
  libsentencepiece-dev sentencepiece libpng-dev libre2-dev libicu-dev
  libavcodec-dev libavformat-dev libavutil-dev libswscale-dev
  libcpp-httplib-dev
  libgtest-dev libgmock-dev
  # end-to-end tests: a real Prometheus and a real gRPC reflection client (Node.js)
  prometheus curl
  # certificates for the TLS tests (server and Python client)
  openssl
  # ffprobe and ffmpeg check the MP4 files core/video writes
  ffmpeg
  # the Python client (clients/python)
  python3-grpcio python3-protobuf
  # tests/ops checks of deploy/: systemd-analyze verifies the systemd units,
  # Python's yaml module reads the Kubernetes manifests
  systemd python3-yaml
)
# Node.js may come from elsewhere (e.g. NodeSource, which conflicts with Debian's npm).
if ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
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
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# LibTorch's matmul is ~30x slower on Debian's reference BLAS: prefer OpenBLAS.
for alt in libblas.so.3 liblapack.so.3; do
  target=$(update-alternatives --list "${alt}-x86_64-linux-gnu" 2>/dev/null |
    grep openblas-pthread | head -n 1 || true)
  if [[ -n "$target" && $(id -u) -eq 0 ]]; then
    update-alternatives --set "${alt}-x86_64-linux-gnu" "$target" >/dev/null
  fi
done
