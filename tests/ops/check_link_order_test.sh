#!/usr/bin/env bash
# check_link_order.sh refuses what a lent H200 built: binaries whose first
# library is not libstdc++, and binaries that take libstdc++'s symbols from
# another library's copies, many of them; it passes one linked as
# CMakeLists.txt links.
#
#   tests/ops/check_link_order_test.sh CXX LIBSTDCXX
#
# CXX: the C++ compiler; LIBSTDCXX: the libstdc++.so.6 it links with.
set -euo pipefail

cxx=${1:?usage: check_link_order_test.sh CXX LIBSTDCXX}
libstdcxx=${2:?usage: check_link_order_test.sh CXX LIBSTDCXX}
check="$(cd "$(dirname "$0")" && pwd)/check_link_order.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# 50 of libstdc++'s functions, which a library of copies defines without a
# symbol version, as the wheels' LibTorch does, and a program calls (it is
# only read, never run).
readelf --dyn-syms -W "$libstdcxx" |
  awk '$4 == "FUNC" && $7 != "UND" && $8 ~ /^_ZNS[tiod]/ {
    sub(/@.*/, "", $8); print $8}' | sort -u >functions
head -n 50 functions >names
(($(wc -l <names) == 50)) || { echo "FAIL: 50 names from $libstdcxx"; exit 1; }
awk '{printf "void copy%d(void) __asm__(\"%s\");\nvoid copy%d(void) {}\n", NR, $1, NR}' \
  names >copies.c
{
  awk '{printf "void copy%d(void) __asm__(\"%s\");\n", NR, $1}' names
  echo 'int main(void) {'
  awk '{printf "  copy%d();\n", NR}' names
  echo '  return 0;'
  echo '}'
} >takes_copies.c
"$cxx" -x c -shared -fPIC copies.c -o libcopies.so
# A stand-in with libstdc++'s name and none of its symbols: a binary can
# name libstdc++ first and still take another library's copies.
echo 'void stand_in(void) {}' >stand_in.c
mkdir stand_in
"$cxx" -x c -shared -fPIC -Wl,-soname,libstdc++.so.6 stand_in.c \
  -o stand_in/libstdc++.so.6
# It allocates and throws: operator new and __cxa_throw are libstdc++'s,
# but AddressSanitizer's own.
cat >as_cmake_links.cc <<'CC'
#include <iostream>
#include <memory>
#include <stdexcept>
int main() {
  const auto value = std::make_unique<int>(1);
  try {
    throw std::runtime_error("linked");
  } catch (const std::exception& error) {
    std::cout << error.what() << *value << std::endl;
  }
}
CC

# shellcheck disable=SC2054  # one linker argument, its commas the linker's
"$cxx" -Wl,--push-state,--no-as-needed,"$libstdcxx",--pop-state \
  as_cmake_links.cc -o as_cmake_links
# AddressSanitizer's runtime, named first, defines operator new and delete
# itself (tests/sanitize.sh's build).
"$cxx" -fsanitize=address \
  -Wl,--push-state,--no-as-needed,"$libstdcxx",--pop-state \
  as_cmake_links.cc -o as_cmake_links_with_asan
"$cxx" -x c takes_copies.c -x none -Wl,--no-as-needed -L. -lcopies "$libstdcxx" \
  -o copies_first
"$cxx" -x c takes_copies.c -x none -Wl,--no-as-needed stand_in/libstdc++.so.6 \
  -L. -lcopies -o copies_behind_libstdcxx

expect() {
  local binary=$1 status=$2 message=$3 said actual=0
  said=$("$check" --libstdcxx "$libstdcxx" "$binary" 2>&1) || actual=$?
  if ((actual != status)) || [[ "$said" != *"$message"* ]]; then
    echo "FAIL $binary: exit $actual (expected $status), said: $said"
    exit 1
  fi
  echo "ok   $binary: exit $actual, said \"$message\""
}
first_copy=$(head -n 1 names | c++filt)
expect as_cmake_links 0 "libstdc++'s symbols from libstdc++"
expect as_cmake_links_with_asan 0 "libstdc++'s symbols from libstdc++"
expect copies_first 1 "its first library is libcopies.so, not libstdc++"
expect copies_first 1 \
  "50 of libstdc++'s symbols without its version, from another library's copies, such as $first_copy"
expect copies_behind_libstdcxx 1 \
  "50 of libstdc++'s symbols without its version"
# Named first, the stand-in passes the first test alone.
said=$("$check" --libstdcxx "$libstdcxx" copies_behind_libstdcxx 2>&1) || true
if [[ "$said" == *"its first library"* ]]; then
  echo "FAIL copies_behind_libstdcxx: refused for its first library: $said"
  exit 1
fi
