#!/usr/bin/env bash
# Fails if a ditserve_* metric used by the Prometheus rules or the Grafana
# dashboard is not registered by the C++ sources (the names passed to
# prometheus::Build*().Name(...) in server/ and core/, string literals or the
# constexpr char constants they name), or if the dashboard uses a recording
# rule (ditserve:...) that the rules file does not record; and if a label
# matcher, by/without list or label_values() in them names a label its metric
# lacks, or a matcher wants a value the code never sets (a status, stage,
# result, ...): such a query silently matches nothing, and its alert never
# fires. A metric's labels are those of the .Add calls that make its series;
# a recording rule's, those its by (...) list keeps.
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

exec python3 "${root}/tests/ops/check_metric_names.py" "${root}" "${rules}" \
  "${files[@]}"
