#!/usr/bin/env bash
# The Debian 12 packages that deploy/gpu/build.sh --deps needs to configure
# the project and build what check.sh builds (the host, ditctl,
# golden-check, the comparison worker and the unit tests), repacked
# small enough to travel with the repository to a GPU machine that has no
# registry (a 64 MiB transfer, say): static libraries (but GTest's, which
# the configuration asks for), documentation and manuals are left out.
# deploy/install-deps.sh --download gives every package instead (~490 MiB).
#
#   deploy/gpu/pack_debs.sh DIR     on a Debian 12 machine with apt access
#
# The packages' own dependencies are not included: build.sh --deps links
# with --allow-shlib-undefined, and the binaries load only what they use.
set -euo pipefail

usage() {
  echo "usage: deploy/gpu/pack_debs.sh DIR" >&2
  exit 2
}
(($# == 1)) && [[ -n "$1" ]] || usage
out=$(realpath -m "$1")

# What CMakeLists.txt finds, with the packages their CMake and pkg-config
# files refer to; the runtime libraries of those its binaries load.
packages=(
  libprotobuf-dev libprotobuf32 libprotobuf-lite32 protobuf-compiler
  libprotoc32 libgrpc++-dev libgrpc-dev libgrpc++1.51 libgrpc29
  protobuf-compiler-grpc grpc-proto libabsl-dev libabsl20220623 libre2-dev
  libre2-9 libc-ares-dev libc-ares2 libssl-dev libssl3 libspdlog-dev
  libspdlog1.10 libfmt-dev libfmt9 nlohmann-json3-dev prometheus-cpp-dev
  libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0
  libprometheus-cpp-push1.0 civetweb libcivetweb-dev libcivetweb1
  libcurl4-openssl-dev libcurl4 libpng-dev libpng16-16 libsentencepiece-dev
  libsentencepiece0 libcpp-httplib-dev libcpp-httplib0.11 libbrotli-dev
  libbrotli1 libavcodec-dev libavformat-dev libavutil-dev libswscale-dev
  libswresample-dev libavcodec59 libavformat59 libavutil57 libswscale6
  libswresample4 libturbojpeg0-dev libturbojpeg0 libwebp-dev libwebp7
  libwebpmux3 libwebpdemux2 libicu-dev libicu72 libgtest-dev libgmock-dev googletest
  libgloo-dev libupb-dev zlib1g-dev pkgconf libpkgconf3 pkgconf-bin
)

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
chmod 755 "$scratch"  # apt downloads as its own user
mkdir -p "$out" "$scratch/debs"
(cd "$scratch/debs" && apt-get download -q "${packages[@]}")
for deb in "$scratch"/debs/*.deb; do
  tree="$scratch/tree"
  rm -rf "$tree"
  dpkg-deb -R "$deb" "$tree"
  find "$tree" -name '*.a' ! -name 'libgtest*' ! -name 'libgmock*' -delete
  rm -rf "$tree/usr/share/doc" "$tree/usr/share/man" "$tree/usr/share/lintian"
  dpkg-deb -Zxz -z9 -b "$tree" "$out/$(basename "$deb")" >/dev/null
done
echo "pack_debs.sh: $(ls "$out"/*.deb | wc -l) packages, $(du -sh "$out" | cut -f1) in $out"
