"""The checks of check_metric_names.sh (which says what they are):
check_metric_names.py ROOT RULES FILE..."""

import collections
import json
import pathlib
import re
import sys

root, rules, files = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3:]


def fail(message):
    sys.exit(f"check_metric_names: {message}")


# Registered names: .Name("literal") or .Name(kConstant) with
# `constexpr char kConstant[] = "literal";` somewhere in server/ or core/.
sources = [p for d in ("server", "core") for p in (root / d).rglob("*")
           if p.suffix in (".cc", ".h")]
text = "\n".join(p.read_text(errors="replace") for p in sources)
constants = dict(re.findall(r'\b(k\w+)\s*\[\s*\]\s*=\s*"([^"]*)"', text))


def name_of(arg):
    if arg.startswith('"'):
        return arg.strip('"')
    if arg in constants:
        return constants[arg]
    fail(f"cannot resolve .Name({arg})")


registered = {name_of(arg)
              for arg in re.findall(r'\.Name\(\s*([^)]*?)\s*\)', text)}
registered = {n for n in registered if n.startswith("ditserve_")}
if not registered:
    fail("found no registered ditserve_* metrics")

# Labels of each metric: those of the .Add calls that make its series. A
# metric is the prometheus::Build*() chain that names it; its .Add calls are
# the one chained to it, or those on the member or local variable the chain
# initializes. An .Add this cannot place, or whose labels or values it cannot
# read, stops the check: a guess would let a wrong label through unseen.

# Labels that take any value: the deployment's model, ranks and token file,
# the build.
OPEN_LABELS = {"model", "rank", "client", "version", "torch", "backend",
               "dtype"}
# StatusLabel() lower-cases absl::StatusCodeToString(), the canonical gRPC
# code names, and Metrics::AddClients adds every code; the names are not in
# the sources, and gRPC fixes them.
GRPC_CODES = {"ok", "cancelled", "unknown", "invalid_argument",
              "deadline_exceeded", "not_found", "already_exists",
              "permission_denied", "resource_exhausted", "failed_precondition",
              "aborted", "out_of_range", "unimplemented", "internal",
              "unavailable", "data_loss", "unauthenticated"}
STATUS_LABEL = re.compile(
    r'StatusLabel\(absl::StatusCode code\) \{\s*return absl::AsciiStrToLower'
    r'\(\s*absl::StatusCodeToString\(code\)\);\s*\}')
if not STATUS_LABEL.search((root / "server/status_conversion.cc").read_text()):
    fail("StatusLabel() no longer lower-cases absl::StatusCodeToString(): "
         "say in GRPC_CODES what it returns")


def found(what, values):
    if not values:
        fail(f"found no {what}")
    return set(values)


def constants_like(pattern):
    return found(f"constants {pattern}",
                 {v for k, v in constants.items()
                  if re.fullmatch(pattern, k) and not k.endswith("Metric")})


stages = found("stage names in core/engine/stage.cc", re.findall(
    r'case Stage::k\w+:\s*return "(\w+)";',
    (root / "core/engine/stage.cc").read_text()))
# Metrics::SetRankMemory names each kind next to the field it reports.
kinds = found("memory kinds in server/metrics.cc", re.findall(
    r'"(\w+)",\s*memory\.', (root / "server/metrics.cc").read_text()))
# Values an .Add takes from a variable (a parameter such as CountRequest's
# `status`), read from where the code names them all; metrics.h says which
# constants each such parameter takes.
CLOSED_VALUES = {
    ("ditserve_requests_total", "status"): GRPC_CODES,
    ("ditserve_stage_duration_seconds", "stage"): stages,
    ("ditserve_rank_stage_duration_seconds", "stage"): stages,
    ("ditserve_rank_memory_bytes", "kind"): kinds,
    ("ditserve_partial_images_total", "result"):
        constants_like(r"kPartialImage\w+"),
    ("ditserve_undelivered_streams_total", "reason"):
        constants_like(r"kStream\w+"),
    ("ditserve_credential_reloads_total", "credential"):
        constants_like(r"k\w+Credential"),
}

LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')


def without_comments(source):
    """`source` with its comments blanked; lines keep their numbers."""
    return re.sub(
        LITERAL.pattern + r'|//[^\n]*|/\*.*?\*/',
        lambda m: m[0] if m[0][0] in "\"'" else re.sub(r'[^\n]', ' ', m[0]),
        source, flags=re.S)


def split_top(s, i):
    """s[i:] split at the commas outside brackets and literals, up to the
    bracket that closes s[i - 1]; and the index past that bracket."""
    parts, depth, start = [], 0, i
    while i < len(s):
        if literal := LITERAL.match(s, i):
            i = literal.end()
            continue
        if s[i] in "({[":
            depth += 1
        elif s[i] in ")}]":
            if depth == 0:
                parts.append(s[start:i].strip())
                return [p for p in parts if p], i + 1
            depth -= 1
        elif s[i] == "," and depth == 0:
            parts.append(s[start:i].strip())
            start = i + 1
        i += 1
    parts.append(s[start:].strip())
    return [p for p in parts if p], i


def values_of(expr):
    """The values a C++ label value can take; None for a variable."""
    expr = re.sub(r'^(\w+::)+', '', expr)
    if literal := re.fullmatch(r'"(\w*)"', expr):
        return {literal[1]}
    if expr in constants:
        return {constants[expr]}
    if ternary := re.fullmatch(r'[^?"]+\?\s*(.+?)\s+:\s+(.+)', expr, re.S):
        a, b = values_of(ternary[1]), values_of(ternary[2])
        return None if a is None or b is None else a | b
    return None


def family_adds(path, source):
    """The type of each metric `source` (its comments blanked) builds, and
    (name, arguments, where) of each .Add of their series."""

    def where(at):
        return f"{path.relative_to(root)}:{source.count(chr(10), 0, at) + 1}"

    types, owners, adds, chained = {}, {}, [], set()
    for build in re.finditer(r'prometheus::Build(Counter|Gauge|Histogram)\(\)',
                             source):
        calls, i = {}, build.end()
        while call := re.compile(r'\s*(\.)\s*(\w+)\s*\(').match(source, i):
            args, i = split_top(source, call.end())
            calls.setdefault(call[2], (args, call.start(1)))
        if "Name" not in calls:
            fail(f"{where(build.start())}: found no .Name of this metric")
        name = name_of(calls["Name"][0][0])
        types[name] = build[1].lower()
        if "Add" in calls:
            adds.append((name, calls["Add"][0], where(calls["Add"][1])))
            chained.add(calls["Add"][1])
        elif owner := re.search(r'(\w+)\s*[(=]\s*$', source[:build.start()]):
            owners[owner[1]] = name
        else:
            fail(f"{where(build.start())}: cannot tell what holds {name}")
    for add in re.finditer(r'\.\s*Add\s*\(', source):
        if add.start() in chained:
            continue
        owner = re.search(r'(\w+)\s*$', source[:add.start()])
        if not owner or owner[1] not in owners:
            fail(f"{where(add.start())}: cannot tell which metric this .Add "
                 "adds to")
        adds.append((owners[owner[1]], split_top(source, add.end())[0],
                     where(add.start())))
    return types, adds


def label_pairs(source, args, where):
    """(label, value expression) of each label of an .Add."""
    labels = args[0]
    if call := re.fullmatch(r'(\w+)\(.*\)', labels, re.S):
        # A lambda that builds the labels, as SetRankMemory's `labels`.
        body = re.search(rf'\b{call[1]}\s*=\s*\[[^\]]*\]\s*\([^)]*\)'
                         r'[^{;]*\{\s*return\s*\{', source)
        if not body:
            fail(f"{where}: cannot read the labels of .Add({labels})")
        labels = "{" + source[body.end():split_top(source, body.end())[1]]
    if not labels.startswith("{"):
        fail(f"{where}: cannot read the labels of .Add({labels})")
    for pair in split_top(labels, 1)[0]:
        label_value = split_top(pair, 1)[0] if pair.startswith("{") else []
        if (len(label_value) != 2 or
                not re.fullmatch(r'"\w+"', label_value[0])):
            fail(f"{where}: cannot read the label {pair}")
        yield label_value[0].strip('"'), label_value[1]


families = {}  # name -> (type, {label: values, None for any})
closed_used = set()
for path in sources:
    source = without_comments(path.read_text(errors="replace"))
    if "prometheus::Build" not in source:
        continue  # its .Add calls, if any, are not a metric's
    types, adds = family_adds(path, source)
    families.update((name, (kind, {})) for name, kind in types.items())
    for name in types.keys() - {name for name, _, _ in adds}:
        fail(f"{path.relative_to(root)}: found no .Add of {name}'s series")
    for name, args, where in adds:
        family = families[name][1]
        for label, value in label_pairs(source, args, where):
            if label in OPEN_LABELS:
                values = None
            elif (values := values_of(value)) is None:
                if (name, label) not in CLOSED_VALUES:
                    fail(f"{where}: cannot tell the values of {name}'s label "
                         f"{label} (set to {value}): name them in "
                         f"CLOSED_VALUES, or add {label} to OPEN_LABELS")
                values = CLOSED_VALUES[name, label]
                closed_used.add((name, label))
            known = family.setdefault(label, set())
            family[label] = (None if known is None or values is None else
                             known | values)
if stale := CLOSED_VALUES.keys() - closed_used:
    fail(f"CLOSED_VALUES names labels no .Add sets from a variable: {stale}")

# PromQL, read far enough to find its selectors, their matchers and the
# by/without lists of its aggregations.
TOKEN = re.compile(r"""\s+|\#[^\n]*
    |(?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
    |(?P<range>\[[^\]]*\])
    |(?P<num>\.?\d[\w.]*)
    |(?P<ident>[A-Za-z_:][\w:]*)
    |(?P<var>\$\{?\w+\}?)
    |(?P<op>=~|!~|!=|==|>=|<=|[-+*/%^(){},=<>@])""", re.X)
AGGREGATORS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar",
               "count", "count_values", "bottomk", "topk", "quantile",
               "limitk", "limit_ratio"}
LABEL_LISTS = {"by", "without", "on", "ignoring", "group_left", "group_right"}
KEYWORDS = LABEL_LISTS | {"bool", "offset", "and", "or", "unless", "inf",
                          "nan"}
Selector = collections.namedtuple("Selector", "at name matchers")
Grouping = collections.namedtuple("Grouping", "text mode labels first last")


def parse(expr):
    """The selectors, groupings and functions of a PromQL expression. A
    grouping spans the tokens of its aggregation, and a selector is `at` a
    token, so that a grouping's selectors are those within it."""
    toks, i = [], 0
    while i < len(expr):
        token = TOKEN.match(expr, i)
        if not token:
            raise ValueError(f"cannot read {expr[i:i + 20]!r} in {expr!r}")
        if token.lastgroup:
            toks.append((token.lastgroup, token[0]))
        i = token.end()
    toks.append(("end", ""))

    def close(i):
        """The index of the bracket that closes toks[i]."""
        depth = 0
        for j in range(i, len(toks)):
            depth += (toks[j][1] in ("(", "{")) - (toks[j][1] in (")", "}"))
            if depth == 0:
                return j
        raise ValueError(f"unbalanced brackets in {expr!r}")

    selectors, groupings, i = [], [], 0
    while toks[i][0] != "end":
        kind, text = toks[i]
        after = toks[i + 1][1]
        if text in LABEL_LISTS and after == "(":
            i = close(i + 1) + 1  # label names, not series
            continue
        if text in AGGREGATORS and after in ("(", "by", "without"):
            last = close(i + 1) if after == "(" else close(close(i + 2) + 1)
            mode = last + 1 if after == "(" else i + 1
            if (mode_name := toks[mode][1]) in ("by", "without"):
                labels = [t for k, t in toks[mode + 2:close(mode + 1)]
                          if k == "ident"]
                groupings.append(Grouping(
                    f"{text} {mode_name} ({', '.join(labels)})", mode_name,
                    labels, i, last))
        elif (kind == "ident" and after != "(" and text not in KEYWORDS
              or text == "{"):
            name, at, matchers = text if kind == "ident" else None, i, []
            if name:
                i += 1
            if toks[i][1] == "{":
                end = close(i)
                for n in range(i + 1, end, 4):
                    m = toks[n:min(n + 4, end)]
                    if (len(m) < 3 or m[0][0] != "ident" or
                            m[1][1] not in ("=", "!=", "=~", "!~") or
                            m[2][0] != "str" or
                            len(m) == 4 and m[3][1] != ","):
                        raise ValueError(
                            f"cannot read the selector in {expr!r}")
                    matchers.append((m[0][1], m[1][1], m[2][1][1:-1]))
                i = end + 1
            selectors.append(Selector(at, name, matchers))
            continue
        i += 1
    functions = {t for (k, t), (_, n) in zip(toks, toks[1:])
                 if k == "ident" and n == "("}
    return selectors, groupings, functions


def rule_exprs(text):
    """(record, expr) of each rule in a Prometheus rules file, record None for
    an alert. The standard library reads no YAML; this reads the plain, quoted
    and block scalars promtool takes for these keys."""
    items, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = re.match(r'(\s*)(-\s+)?(?:(record|alert|expr):\s*(.*))?', lines[i])
        i += 1
        if m[2] or not items:
            items.append({})
        if not m[3]:
            continue
        column, block = len(m[1]) + len(m[2] or ""), []
        while i < len(lines) and (
                not lines[i].strip() or
                len(lines[i]) - len(lines[i].lstrip()) > column):
            block.append(lines[i])
            i += 1
        value = m[4].strip()
        if value.startswith(("|", ">")):
            value = "\n".join(block)
        else:
            value = "\n".join([value] + block).strip()
            if value.startswith('"'):
                value = json.loads(value.replace("\n", " "))
            elif value.startswith("'"):
                value = value[1:-1].replace("''", "'")
        items[-1][m[3]] = value
    return [(item.get("record"), item["expr"])
            for item in items if "expr" in item]


def dashboard_exprs(data):
    """The queries of a Grafana dashboard: its panels' and its variables'."""
    if isinstance(data, dict):
        for key, value in data.items():
            if (key in ("expr", "query", "definition") and
                    isinstance(value, str)):
                yield value
            else:
                yield from dashboard_exprs(value)
    elif isinstance(data, list):
        for value in data:
            yield from dashboard_exprs(value)


# The target labels Prometheus adds to every scraped series.
SCRAPED = {"instance": None, "job": None}
recorded_labels = {}


def series_labels(name):
    """{label: values, None for any} of the series `name`; None if it is not
    one of ours (or not registered, which the name check reports)."""
    if name == "up":
        return dict(SCRAPED)
    if name in recorded_labels:
        return recorded_labels[name]
    family = re.sub(r'_(bucket|sum|count)$', '', name)
    if families.get(family, ("",))[0] != "histogram":
        family = name
    if family not in families:
        return None
    labels = {**families[family][1], **SCRAPED}
    if name.endswith("_bucket") and family != name:
        labels["le"] = None
    return labels


def merged(label, label_sets):
    values = [labels[label] for labels in label_sets if label in labels]
    return None if not values or None in values else set().union(*values)


def recorded_by(expr):
    """The labels of what a recording rule's expr records: those its
    outermost aggregations keep (their by list, or what their without list
    leaves), or those all its series share if it aggregates nothing."""
    selectors, groupings, functions = parse(expr)
    known = [(s.at, series_labels(s.name)) for s in selectors if s.name]
    known = [(at, labels) for at, labels in known if labels is not None]

    def shared(g=None):
        sets = [set(labels) for at, labels in known
                if g is None or g.first <= at <= g.last]
        return set.intersection(*sets) if sets else set()

    outer = [g for g in groupings if not any(
        h is not g and h.first <= g.first <= h.last for h in groupings)]
    keep = (set.intersection(*(
        set(g.labels) if g.mode == "by" else shared(g) - set(g.labels)
        for g in outer)) if outer else shared())
    if "histogram_quantile" in functions:
        keep.discard("le")
    return {label: merged(label, [labels for _, labels in known])
            for label in keep}


for record, expr in rule_exprs(pathlib.Path(rules).read_text()):
    if record:
        try:
            recorded_labels[record] = recorded_by(expr)
        except ValueError as e:
            fail(f"{rules}: {e}")
recorded = set(recorded_labels)


def listed(values):
    return ", ".join(sorted(values))


def matcher_problem(name, labels, label, op, value):
    selector = f'{name}{{{label}{op}"{value}"}}'
    if label not in labels:
        return (f"{selector}: {name} has no label {label} "
                f"(labels: {listed(labels)})")
    if labels[label] is None or "$" in value:
        return None
    if op in ("=~", "!~"):
        if not re.fullmatch(r'[\w|]*', value):
            return None  # a regular expression beyond a|b|c: not checked
        wanted = value.split("|")
    else:
        wanted = [value]
    for v in wanted:
        if v and v not in labels[label]:
            return (f'{selector}: the code never sets {label}="{v}" '
                    f"({label}: {listed(labels[label])})")
    return None


def label_problems(expr, checked):
    """What is wrong with the labels `expr` names; counts in `checked` the
    matchers and by/without lists it has."""
    problems = []
    selectors, groupings, _ = parse(expr)
    ours = [(s, series_labels(s.name)) for s in selectors if s.name]
    ours = [(s, labels) for s, labels in ours if labels is not None]
    for s, labels in ours:
        for matcher in s.matchers:
            checked["label matchers"] += 1
            problems.append(matcher_problem(s.name, labels, *matcher))
    for g in groupings:
        checked["by/without lists"] += 1
        for s, labels in ours:
            for label in g.labels if g.first <= s.at <= g.last else []:
                if label not in labels:
                    problems.append(f"{g.text}: {s.name} has no label {label} "
                                    f"(labels: {listed(labels)})")
    for name, label in re.findall(
        r'label_values\(\s*([\w:]+)\s*(?:\{[^}]*\})?\s*,\s*(\w+)', expr):
        labels = series_labels(name)
        if labels is not None and label not in labels:
            problems.append(f"label_values({name}, {label}): {name} has no "
                            f"label {label} (labels: {listed(labels)})")
    return [p for p in problems if p]


bad, checked = [], collections.Counter()
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
    exprs = (dashboard_exprs(json.loads(body)) if f.endswith(".json") else
             (expr for _, expr in rule_exprs(body)))
    in_file = collections.Counter({"label matchers": 0, "by/without lists": 0})
    for expr in exprs:
        try:
            bad += [f"{f}: {p}" for p in label_problems(expr, in_file)]
        except ValueError as e:
            bad.append(f"{f}: {e}")
    checked.update(in_file)
    print(f"{f}: {len(used)} metrics, {len(rule_refs)} recording rules used; "
          + ", ".join(f"{n} {what}" for what, n in in_file.items()))

if bad:
    print("\n".join(dict.fromkeys(bad)), file=sys.stderr)
    sys.exit(1)
print(f"ok: every name is registered ({len(registered)} registered metrics)")
closed = sorted({label for _, labels in families.values()
                 for label, values in labels.items() if values is not None})
print("ok: every label is one its metric has and every value one the code "
      "sets (" + ", ".join(f"{n} {what}" for what, n in checked.items())
      + f"; values known for {', '.join(closed)})")
