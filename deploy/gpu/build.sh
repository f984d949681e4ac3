#!/usr/bin/env bash
# Builds ditserve's CUDA configuration (-DDITSERVE_CUDA=ON) against a CUDA
# LibTorch 2.x: the LibTorch distribution, or the libtorch inside a PyTorch
# wheel. Debian's LibTorch 1.13 (deploy/install-deps.sh) stays the CPU build's.
#
#   deploy/gpu/build.sh --libtorch DIR|python [--deps DIR] [--build-dir DIR]
#                       [--targets "T1 T2 ..."] [--keep-going]
#                       [-- CMAKE_ARGS...]
#
#   --libtorch  the folder that holds share/cmake/Torch (or the Torch CMake
#               folder itself); `python` asks python3's torch package where
#               it is
#   --deps      a folder of Debian 12 .deb files (deploy/install-deps.sh
#               --download, or deploy/gpu/pack_debs.sh for check.sh's two
#               binaries) for a machine whose libraries cannot be installed
#               with apt (another distribution, no root): they are unpacked
#               into BUILD/deps, and BUILD/env.sh sets the loader path the
#               binaries then run with
#   --targets   what to build (default: the shipped binaries, golden-check and
#               the comparison worker; "all" for everything, tests included)
#   --keep-going  build all that can be built, to see every error at once
#
# Needs CMake, Ninja, a C++17 compiler and the CUDA toolkit (nvcc) that
# LibTorch's CMake package looks for. No GPU is needed to build.
set -euo pipefail

usage() {
  echo "usage: deploy/gpu/build.sh --libtorch DIR|python [--deps DIR]" \
    "[--build-dir DIR] [--targets \"T1 T2 ...\"|all] [--keep-going]" \
    "[-- CMAKE_ARGS...]" >&2
  exit 2
}

repo=$(cd "$(dirname "$0")/../.." && pwd)
libtorch=""
deps=""
keep_going=()
build="$repo/build-cuda"
targets="ditserve-host ditserve-worker ditctl ditserve-make-checkpoint \
ditserve-golden-check ditserve-bench-compare-worker"
while (($# > 0)); do
  case "$1" in
    --libtorch) libtorch=${2:?}; shift 2 ;;
    --deps) deps=${2:?}; shift 2 ;;
    --build-dir) build=${2:?}; shift 2 ;;
    --targets) targets=${2:?}; shift 2 ;;
    --keep-going) keep_going=(-- -k 0); shift ;;
    --) shift; break ;;
    *) echo "build.sh: unknown argument $1" >&2; usage ;;
  esac
done
[[ -n "$libtorch" ]] || usage
build=$(realpath -m "$build")
if [[ "$libtorch" == python ]]; then
  libtorch=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))')
fi
torch_dir="$libtorch/share/cmake/Torch"
[[ -f "$torch_dir/TorchConfig.cmake" ]] || torch_dir="$libtorch"
if [[ ! -f "$torch_dir/TorchConfig.cmake" ]]; then
  echo "build.sh: no TorchConfig.cmake in $libtorch/share/cmake/Torch or" \
    "$libtorch: --libtorch must hold a LibTorch 2.x" >&2
  exit 2
fi

# LibTorch's CMake package finds CUDA through nvcc.
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
# Without a GPU to detect, name the architectures: A100, A10 / RTX 30,
# L4 / RTX 40, H100 / H200.
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-8.0;8.6;8.9;9.0}

cmake_args=(-S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
  -DDITSERVE_CUDA=ON "-DTorch_DIR=$torch_dir")
if [[ "$targets" != all ]]; then
  cmake_args+=(-DDITSERVE_BUILD_TESTS=OFF)
fi
if [[ -n "$deps" ]]; then
  # The Python client's generated modules need Debian's python3-grpcio,
  # which --deps cannot give python3.
  cmake_args+=(-DDITSERVE_PYTHON_CLIENT=OFF)
fi
if [[ -n "$deps" ]]; then
  [[ -d "$deps" ]] || { echo "build.sh: --deps $deps is not a folder" >&2; exit 2; }
  root="$build/deps"
  mkdir -p "$root"
  for deb in "$deps"/*.deb; do dpkg-deb -x "$deb" "$root"; done
  libdir="$root/usr/lib/x86_64-linux-gnu"
  # The packages' .pc files say prefix=/usr: the sysroot relocates them.
  export PKG_CONFIG_SYSROOT_DIR="$root"
  export PKG_CONFIG_LIBDIR="$libdir/pkgconfig:$root/usr/share/pkgconfig"
  export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # The folder need not hold the libraries its libraries link (FFmpeg's
  # codecs, say): the binaries are linked without them and load only what
  # they use. CMake reads LDFLAGS on a build folder's first configuration.
  export LDFLAGS="${LDFLAGS:+$LDFLAGS }-Wl,--allow-shlib-undefined"
  cmake_args+=("-DCMAKE_PREFIX_PATH=$root/usr"
    "-DGRPC_PROTO_DIR=$root/usr/share/grpc-proto")
  if ! command -v pkg-config >/dev/null && [[ -x "$root/usr/bin/pkgconf" ]]; then
    cmake_args+=("-DPKG_CONFIG_EXECUTABLE=$root/usr/bin/pkgconf")
  fi
  # shellcheck disable=SC2016  # expanded when env.sh is sourced
  printf 'export LD_LIBRARY_PATH=%q${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\n' \
    "$libdir" >"$build/env.sh"
fi

cmake "${cmake_args[@]}" "$@"
if [[ "$targets" == all ]]; then
  cmake --build "$build" -j "$(nproc)" "${keep_going[@]}"
else
  # shellcheck disable=SC2086  # a list of target names
  cmake --build "$build" -j "$(nproc)" --target $targets "${keep_going[@]}"
fi

# A binary that takes LibTorch's copies of libstdc++ crashes (CMakeLists.txt
# says why): refuse what this build made if it would, with what the linker
# took for libstdc++.
built=()
for target in $targets; do
  case "$target" in
    all | unit_test_binaries)
      for binary in "$build"/bin/*; do built+=("$binary"); done
      if [[ -f "$build/unit_test_binaries.txt" ]]; then
        mapfile -t -O "${#built[@]}" built <"$build/unit_test_binaries.txt"
      fi ;;
    *) built+=("$build/bin/$target") ;;
  esac
done
checked=()
for binary in "${built[@]}"; do
  [[ -f "$binary" && -x "$binary" ]] && checked+=("$binary")
done
libstdcxx=$(sed -n 's/^DITSERVE_LIBSTDCXX:INTERNAL=//p' "$build/CMakeCache.txt")
rm -f "$build/link-trace.log"
if ((${#checked[@]} > 0)) &&
  ! "$repo/tests/ops/check_link_order.sh" --libstdcxx "$libstdcxx" \
    "${checked[@]}" >"$build/link-order.log" 2>&1; then
  grep -m 8 -A2 '^FAIL' "$build/link-order.log" || tail -n 5 "$build/link-order.log"
  target=$(awk '/^FAIL/ {sub(":", "", $2); print $2; exit}' "$build/link-order.log")
  echo "build.sh: the libstdc++ the binaries name first: $libstdcxx"
  if [[ -n "$target" ]]; then
    echo "build.sh: what the linker opens for libstdc++ and LibTorch in $target's link:"
    link=$(cd "$build" && ninja -t commands "$target" | tail -n 1) || true
    # The command first: a flag in it (-static-libstdc++, say) may say why.
    printf '%s\n' "$link" >"$build/link-trace.log"
    (cd "$build" && eval "${link% && :} -Wl,-t" >>"$build/link-trace.log" 2>&1) || true
    tail -n +2 "$build/link-trace.log" | grep -E 'stdc\+\+|libtorch(_cpu)?\.so' |
      head -n 8 || true
  fi
  echo "build.sh: the binaries would take libstdc++'s symbols from another" \
    "library's copies (all in $build/link-order.log)" >&2
  exit 1
fi
echo "build.sh: built $targets in $build${deps:+ (source $build/env.sh to run)}"
