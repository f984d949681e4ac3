#!/usr/bin/env bash
# The scripts of a GPU cluster's install without a registry, short of the
# install and the CUDA build themselves (no GPU, no CUDA LibTorch here):
# deploy/install-deps.sh --download/--from and deploy/gpu/build.sh,
# pack_debs.sh, pack_runtime_libs.sh, serving_check.sh and check.sh refuse
# bad usage with exit 2 and a usage line, --from with nothing missing needs
# no folder content, serving_check.sh tells a crashed host from other
# failures, check.sh's test runner reports what it ran, and
# -DDITSERVE_CUDA=ON refuses a CPU LibTorch by name.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
scratch=$(mktemp -d)
trap 'rm -rf "${scratch}"' EXIT
failures=0

# expect NAME WANT_STATUS WANT_TEXT COMMAND...: the exit status is WANT_STATUS
# and the output holds WANT_TEXT.
expect() {
  local name=$1 want_status=$2 want=$3
  shift 3
  local got status=0
  got=$("$@" 2>&1) || status=$?
  if [[ ${status} -ne ${want_status} || "${got}" != *"${want}"* ]]; then
    echo "FAIL ${name}: exit ${status} (want ${want_status}), output:"
    echo "${got}" | head -20
    failures=$((failures + 1))
  else
    echo "ok   ${name}"
  fi
}

install_deps="${root}/deploy/install-deps.sh"
expect "install-deps: unknown option" 2 "usage:" bash "${install_deps}" --bogus
expect "install-deps: --from without a folder" 2 "usage:" \
  bash "${install_deps}" --from
expect "install-deps: --from a missing folder" 2 "no such directory" \
  bash "${install_deps}" --from "${scratch}/absent"
expect "install-deps: --download of an empty name" 2 "usage:" \
  bash "${install_deps}" --download ""
expect "install-deps: an extra argument" 2 "usage:" \
  bash "${install_deps}" --from "${scratch}" extra
# tests/run.sh installed everything before the tests, so nothing is missing.
expect "install-deps: --from with nothing missing" 0 "nothing missing" \
  bash "${install_deps}" --from "${scratch}"

build="${root}/deploy/gpu/build.sh"
debian_torch=/usr/lib/x86_64-linux-gnu/cmake/Torch
expect "gpu/build.sh: no --libtorch" 2 "usage:" bash "${build}"
expect "gpu/build.sh: unknown argument" 2 "unknown argument --bogus" \
  bash "${build}" --bogus
expect "gpu/build.sh: --libtorch without TorchConfig.cmake" 2 \
  "must hold a LibTorch 2.x" bash "${build}" --libtorch "${scratch}"
expect "gpu/build.sh: --deps that is not a folder" 2 "is not a folder" \
  bash "${build}" --libtorch "${debian_torch}" --deps "${scratch}/absent" \
  --build-dir "${scratch}/build"
pack_debs="${root}/deploy/gpu/pack_debs.sh"
expect "gpu/pack_debs.sh: no folder" 2 "usage:" bash "${pack_debs}"
expect "gpu/pack_debs.sh: an extra argument" 2 "usage:" \
  bash "${pack_debs}" "${scratch}/debs" extra
pack_runtime_libs="${root}/deploy/gpu/pack_runtime_libs.sh"
expect "gpu/pack_runtime_libs.sh: two arguments" 2 "usage:" \
  bash "${pack_runtime_libs}" "${scratch}" "${scratch}/libs.tar.xz"
expect "gpu/pack_runtime_libs.sh: a host that is not a program" 2 \
  "is not a program" bash "${pack_runtime_libs}" "${scratch}/absent" \
  "${scratch}" "${scratch}/libs.tar.xz"
expect "gpu/pack_runtime_libs.sh: a folder without .deb files" 2 \
  "holds no .deb files" bash "${pack_runtime_libs}" /bin/true \
  "${scratch}" "${scratch}/libs.tar.xz"
serving_check="${root}/deploy/gpu/serving_check.sh"
expect "gpu/serving_check.sh: no --model_dir" 2 "usage:" \
  bash "${serving_check}" --bin "${scratch}"
expect "gpu/serving_check.sh: unknown argument" 2 "unknown argument --bogus" \
  bash "${serving_check}" --bogus
expect "gpu/serving_check.sh: --bin without the binaries" 2 \
  "no ditserve-host in --bin" bash "${serving_check}" --bin "${scratch}" \
  --model_dir "${scratch}"
# A host that dies as the lent H200's did, its crash report first (the
# real host does not crash here): serving_check.sh says so by its status,
# which check.sh reads. Its scratch folder, kept on failure, goes to ours.
mkdir "${scratch}/crashing"
printf '%s\n' '#!/bin/sh' \
  'echo "*** SIGSEGV received at time=1 on cpu 0 ***" >&2' \
  'echo "PC: @ 0x0 (unknown) httplib::Server::Get()" >&2' 'exit 139' \
  >"${scratch}/crashing/ditserve-host"
printf '%s\n' '#!/bin/sh' 'exit 1' >"${scratch}/crashing/ditctl"
chmod +x "${scratch}/crashing/ditserve-host" "${scratch}/crashing/ditctl"
# serving_check.sh on the stand-ins in folder $1.
check_stand_ins() {
  env TMPDIR="${scratch}" bash "${serving_check}" --bin "${scratch}/$1" \
    --device cpu --log "${scratch}/$1/serving.log" \
    --model_dir "${root}/tests/data/golden/pipelines/flux_dev_text"
}
expect "gpu/serving_check.sh: a host that crashed" 3 \
  "2 of 2 hosts' checks (above), 2 by a crash" check_stand_ins crashing
# One that a signal ends before it could write a report.
mkdir "${scratch}/killed"
printf '%s\n' '#!/bin/sh' 'kill -SEGV $$' >"${scratch}/killed/ditserve-host"
cp "${scratch}/crashing/ditctl" "${scratch}/killed/ditctl"
chmod +x "${scratch}/killed/ditserve-host"
expect "gpu/serving_check.sh: a host that a signal ended without a report" 3 \
  "SEGV ended it without a crash report" check_stand_ins killed
# And one killed after it served, while a ditctl call was under way.
mkdir "${scratch}/killed_serving"
printf '%s\n' '#!/bin/sh' 'sleep 1' 'kill -KILL $$' \
  >"${scratch}/killed_serving/ditserve-host"
printf '%s\n' '#!/bin/sh' 'case " $* " in *" health "*) exit 0 ;; esac' \
  'sleep 2' 'exit 1' >"${scratch}/killed_serving/ditctl"
chmod +x "${scratch}/killed_serving/ditserve-host" \
  "${scratch}/killed_serving/ditctl"
expect "gpu/serving_check.sh: a host killed while it served" 3 \
  "2 of 2 hosts' checks (above), 2 by a crash" check_stand_ins killed_serving
check="${root}/deploy/gpu/check.sh"
expect "gpu/check.sh: no --libtorch" 2 "the build stage needs --libtorch" \
  bash "${check}"
expect "gpu/check.sh: an unknown stage" 2 \
  "--stages: unknown stage bogus; expected some of: build golden" \
  bash "${check}" --stages "serving bogus"
expect "gpu/check.sh: a stage past --seconds is skipped" 0 \
  "the serving binaries on the GPU: skipped, --seconds 0 have passed" \
  bash "${check}" --stages "golden serving" --seconds 0 --work "${scratch}"
mkdir -p "${scratch}/work"
echo "a host's log" >"${scratch}/work/serving.log"
# shellcheck disable=SC2016  # expanded by the bash -c
expect "gpu/check.sh: --logs packs WORK's logs, whatever ran" 0 \
  "./serving.log" bash -c '"$1" --stages serving --seconds 0 --work "$2" \
  --logs "$3" >/dev/null && tar -tzf "$3"' _ "${check}" "${scratch}/work" \
  "${scratch}/out/logs.tar.gz"
expect "gpu/check.sh: --seconds not a number" 2 \
  "--seconds soon: expected a whole number of seconds" \
  bash "${check}" --stages serving --seconds soon
expect "gpu/check.sh: unknown argument" 2 "unknown argument --bogus" \
  bash "${check}" --libtorch python --bogus
expect "gpu/check.sh: an unknown model" 2 \
  "--models: unknown model flux-schnell; expected some of: flux-dev" \
  bash "${check}" --libtorch python --models "sd3-medium flux-schnell"
# The unit stage's runner (tests/sanitize.sh's too), on stand-ins for
# GoogleTest binaries: one passes, one fails, one ends without a summary,
# one is not built.
printf '#!/bin/sh\necho "[  PASSED  ] 3 tests."\n' >"${scratch}/passes"
printf '#!/bin/sh\necho "[  FAILED  ] 1 test, listed below:"\nexit 1\n' \
  >"${scratch}/fails"
printf '#!/bin/sh\nexit 139\n' >"${scratch}/crashes"
chmod +x "${scratch}/passes" "${scratch}/fails" "${scratch}/crashes"
printf '%s\n' "${scratch}/passes" "${scratch}/fails" "${scratch}/crashes" \
  "${scratch}/absent" >"${scratch}/binaries.txt"
run_gtest_binaries=("${root}/tests/run_gtest_binaries.sh"
  "${scratch}/binaries.txt" "${scratch}/logs" 2)
expect "run_gtest_binaries.sh: the one not built" 1 "absent is not built" \
  "${run_gtest_binaries[@]}"
expect "run_gtest_binaries.sh: the one that passed" 1 "passes exit 0 in " \
  "${run_gtest_binaries[@]}"
expect "run_gtest_binaries.sh: its gtest summary" 1 \
  " s: [ PASSED ] 3 tests." "${run_gtest_binaries[@]}"
expect "run_gtest_binaries.sh: the one that failed, with its log" 1 \
  "--- the end of fails's log:" "${run_gtest_binaries[@]}"
expect "run_gtest_binaries.sh: the one that crashed, without a summary" 1 \
  "crashes exit 139 (SIGSEGV) in " "${run_gtest_binaries[@]}"
expect "run_gtest_binaries.sh: how the crashed one ended, in its log" 1 \
  $'the end of crashes\'s log:\nrun_gtest_binaries.sh: crashes exit 139 (SIGSEGV)' \
  "${run_gtest_binaries[@]}"
expect "run_gtest_binaries.sh: no summary said so" 1 \
  " s: no gtest summary" "${run_gtest_binaries[@]}"
expect "run_gtest_binaries.sh: the count" 1 \
  "3 of 4 binaries run, 3 failed: absent (not built) fails crashes" \
  "${run_gtest_binaries[@]}"
expect "run_gtest_binaries.sh: no list" 2 "no list" \
  "${root}/tests/run_gtest_binaries.sh" "${scratch}/none.txt" "${scratch}/logs"

# Debian's LibTorch has no CUDA: the configuration stops right after finding
# it and says what to pass instead.
expect "DITSERVE_CUDA=ON with a CPU LibTorch" 1 \
  "DITSERVE_CUDA=ON needs a CUDA build of LibTorch" \
  cmake -S "${root}" -B "${scratch}/cuda" -G Ninja -DDITSERVE_CUDA=ON \
  -DDITSERVE_BUILD_TESTS=OFF

if ((failures > 0)); then
  echo "${failures} failed"
  exit 1
fi
