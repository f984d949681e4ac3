#!/usr/bin/env bash
# Fails unless systemd-analyze verify accepts deploy/systemd's units without a
# word, and unless deploy/systemd/ditserve.env.example sets the torchrun
# variables and passes, through the variables the units expand, only flags
# the binaries accept, with degrees that fit WORLD_SIZE. Then verifies
# broken copies of the units and fails unless each is refused.
#
#   tests/ops/check_systemd_units.sh [HOST_BINARY WORKER_BINARY]
#   (default: build/bin/ditserve-host and build/bin/ditserve-worker)
#
# This machine runs no systemd (the tests run in containers), so verify gets
# a scratch root (--root): systemd's own units copied from this machine (the
# targets ours are ordered against), ours under /etc/systemd/system, and
# stand-in executables at /opt/ditserve/bin and for the system commands the
# units run, since verify only checks that each Exec line names an
# executable file in that root. verify exits 0 on unknown
# keys and unparsable values, only printing them, so any output fails.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
units="${root}/deploy/systemd"
host_bin=${1:-${root}/build/bin/ditserve-host}
worker_bin=${2:-${root}/build/bin/ditserve-worker}
scratch=$(mktemp -d)
trap 'rm -rf "${scratch}"' EXIT

# verify_tree NAME DIR_OF_UNITS: 0 if verify accepts the units silently.
verify_tree() {
  local tree="${scratch}/$1"
  mkdir -p "${tree}/usr/lib/systemd" "${tree}/etc/systemd/system" \
    "${tree}/opt/ditserve/bin"
  cp -a /usr/lib/systemd/system "${tree}/usr/lib/systemd/"
  cp "$2"/*.service "${tree}/etc/systemd/system/"
  for binary in ditserve-host ditserve-worker; do
    printf '#!/bin/sh\n' >"${tree}/opt/ditserve/bin/${binary}"
    chmod +x "${tree}/opt/ditserve/bin/${binary}"
  done
  # The system commands the units run (ExecReload's kill), as stand-ins in
  # the root where this machine has them, so a misspelt one still fails.
  local command
  for command in $(sed -n 's/^Exec[A-Za-z]*=[-@+!:]*\(\/[^ ]*\).*/\1/p' \
    "$2"/*.service | grep -v '^/opt/ditserve/' | sort -u); do
    if [[ -x "${command}" ]]; then
      mkdir -p "${tree}$(dirname "${command}")"
      printf '#!/bin/sh\n' >"${tree}${command}"
      chmod +x "${tree}${command}"
    fi
  done
  local out
  out=$(systemd-analyze verify --root="${tree}" ditserve-host.service \
    ditserve-worker@1.service 2>&1) || { echo "${out}"; return 1; }
  [[ -z "${out}" ]] || { echo "${out}"; return 1; }
}

failed=0
if out=$(verify_tree good "${units}"); then
  echo "ok   systemd-analyze verify accepts deploy/systemd"
else
  echo "FAIL systemd-analyze verify:"$'\n'"${out}" >&2
  failed=1
fi

# break_and_verify NAME SED_SCRIPT UNIT: verifies a copy of the units with
# UNIT edited by SED_SCRIPT, and fails the check unless verify refuses it.
break_and_verify() {
  local name=$1 script=$2 unit=$3 dir="${scratch}/units-$1"
  mkdir -p "${dir}"
  cp "${units}"/*.service "${dir}/"
  sed -i "${script}" "${dir}/${unit}"
  if cmp -s "${units}/${unit}" "${dir}/${unit}"; then
    echo "FAIL break ${name}: the edit changed nothing" >&2
    failed=1
  elif out=$(verify_tree "broken-${name}" "${dir}"); then
    echo "FAIL break ${name}: verify accepted it" >&2
    failed=1
  else
    echo "ok   break ${name} refused: ${out%%$'\n'*}"
  fi
}
break_and_verify exec-path 's#bin/ditserve-host #bin/ditserve-hots #' \
  ditserve-host.service
break_and_verify reload-path 's#=/bin/kill #=/bin/kil #' \
  ditserve-host.service
break_and_verify restart-value 's#^Restart=on-failure#Restart=on-falure#' \
  ditserve-worker@.service
break_and_verify unknown-key 's#^RestartSec=#RestartSecs=#' \
  ditserve-worker@.service

# The example environment file against the binaries and the units.
/usr/bin/python3 - "${root}" "${host_bin}" "${worker_bin}" <<'PY' || failed=1
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
sys.path.insert(0, str(root / "tests" / "ops"))
import deploy_facts as facts  # noqa: E402

units = root / "deploy" / "systemd"
env_path = units / "ditserve.env.example"
env = dict(re.findall(r"^([A-Z_]+)=(.*)$", env_path.read_text(), re.M))
where = env_path.relative_to(root)
problems = [f"{where}: sets no {name}" for name in
            ("WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "DITSERVE_FLAGS")
            if name not in env]
# The units pass --rank themselves; a RANK here would be ignored.
problems += [f"{where}: sets {name}, which differs per rank"
             for name in ("RANK", "LOCAL_RANK") if name in env]
execs = {u.name: re.search(r"^ExecStart=(.*)$", u.read_text(), re.M).group(1)
         for u in units.glob("*.service")}
for name in (n for n in env if n.startswith("DITSERVE_")):
    if not any(f"${name}" in line.split() for line in execs.values()):
        problems.append(f"{where}: no unit's ExecStart expands ${name}")
shared, bad = facts.parse_flags(env.get("DITSERVE_FLAGS", "").split(),
                                f"{where}: DITSERVE_FLAGS")
problems += bad
host_only, bad = facts.parse_flags(env.get("DITSERVE_HOST_FLAGS", "").split(),
                                   f"{where}: DITSERVE_HOST_FLAGS")
problems += bad
problems += facts.unknown_flag_problems(shared, facts.known_flags(sys.argv[3]),
                                        f"{where}: DITSERVE_FLAGS (worker)")
problems += facts.unknown_flag_problems(
    {**shared, **host_only}, facts.known_flags(sys.argv[2]),
    f"{where}: DITSERVE_FLAGS DITSERVE_HOST_FLAGS (host)")
if not re.fullmatch(r"[1-9][0-9]*", env.get("WORLD_SIZE", "")):
    problems.append(f"{where}: WORLD_SIZE is not a positive integer")
else:
    problems += facts.degree_problems(shared, int(env["WORLD_SIZE"]), where)
for line in problems:
    print(line, file=sys.stderr)
if problems:
    sys.exit(1)
print(f"ok   {where}: flags known to both binaries, degrees fit WORLD_SIZE "
      f"{env['WORLD_SIZE']}")
PY

exit "${failed}"
