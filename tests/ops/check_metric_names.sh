#!/usr/bin/env bash
# Fails if a ditserve_* metric used by the Prometheus rules or the Grafana
# dashboard is not registered by the C++ sources (the names passed to
# prometheus::Build*().Name(...) in server/ and core/, string literals or the
# constexpr char constants they name), or if the dashboard uses a recording
# rule (ditserve:...) that the rules file does not record.
#
#   tests/ops/check_metric_names.sh [FILE...]   (default: the two files below)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
rules="${root}/deploy/prometheus/ditserve-rules.yml"
if [[ $# -gt 0 ]]; then
  files=("$@")
else
  files=("${rules}" "${root}/deploy/grafana/ditserve.json")
fi

exec python3 - "${root}" "${rules}" "${files[@]}" <<'PY'
import pathlib
import re
import sys

root, rules, files = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3:]

# Registered names: .Name("literal") or .Name(kConstant) with
# `constexpr char kConstant[] = "literal";` somewhere in server/ or core/.
sources = [p for d in ("server", "core") for p in (root / d).rglob("*")
           if p.suffix in (".cc", ".h")]
text = "\n".join(p.read_text(errors="replace") for p in sources)
constants = dict(re.findall(r'\b(k\w+)\s*\[\s*\]\s*=\s*"([^"]*)"', text))
registered = set()
for arg in re.findall(r'\.Name\(\s*([^)]*?)\s*\)', text):
    if arg.startswith('"'):
        registered.add(arg.strip('"'))
    elif arg in constants:
        registered.add(constants[arg])
    else:
        sys.exit(f"check_metric_names: cannot resolve .Name({arg})")
registered = {n for n in registered if n.startswith("ditserve_")}
if not registered:
    sys.exit("check_metric_names: found no registered ditserve_* metrics")

recorded = set(re.findall(r'^\s*-?\s*record:\s*(\S+)',
                          pathlib.Path(rules).read_text(), re.M))

bad = []
for f in files:
    body = pathlib.Path(f).read_text()
    # A histogram's series end in _bucket/_sum/_count; a name registered as
    # written (ditserve_requests_total) is taken as it is.
    used = {m if m in registered else re.sub(r'_(bucket|sum|count)$', '', m)
            for m in re.findall(r'\bditserve_[a-z0-9_]+', body)}
    rule_refs = set(re.findall(r'\bditserve:[A-Za-z0-9_:]+', body))
    if not used and not rule_refs:
        bad.append(f"{f}: uses no ditserve metric at all (wrong file?)")
    for name in sorted(used - registered):
        bad.append(f"{f}: metric {name} is not registered in server/ or core/")
    for name in sorted(rule_refs - recorded):
        bad.append(f"{f}: recording rule {name} is not recorded in {rules}")
    print(f"{f}: {len(used)} metrics, {len(rule_refs)} recording rules used")

if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
print(f"ok: every name is registered ({len(registered)} registered metrics)")
PY
