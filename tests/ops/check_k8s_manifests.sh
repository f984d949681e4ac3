#!/usr/bin/env bash
# Fails unless every LeaderWorkerSet manifest in deploy/k8s starts the
# image's entrypoint with the right role, passes only flags the binaries
# accept, in --name=value form, with degrees that fit the group size and the
# same model and degree flags on the host and the workers; uses the image
# deploy/docker/Dockerfile builds (Dockerfile.cuda for a *-gpu.yaml, whose
# pods must each request one nvidia.com/gpu); sets --threads to a CPU limit
# (a rank counts the node's cores, not its limit); mounts --model_dir; and
# probes the host's gRPC health on its --grpc_port for start-up and
# readiness, but only a TCP connection to that port for liveness (health is
# NOT_SERVING while the group re-forms). Then breaks copies of the manifests
# one way at a time and fails unless each break is reported.
#
#   tests/ops/check_k8s_manifests.sh [HOST_BINARY WORKER_BINARY]
#   (default: build/bin/ditserve-host and build/bin/ditserve-worker)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
host_bin=${1:-${root}/build/bin/ditserve-host}
worker_bin=${2:-${root}/build/bin/ditserve-worker}

# Debian's interpreter: python3-yaml (deploy/install-deps.sh) is installed
# for it, not for any other python3 on the PATH.
exec /usr/bin/python3 - "${root}" "${host_bin}" "${worker_bin}" <<'PY'
import copy
import pathlib
import sys

import yaml

root = pathlib.Path(sys.argv[1])
sys.path.insert(0, str(root / "tests" / "ops"))
import deploy_facts as facts  # noqa: E402

host_flags = facts.known_flags(sys.argv[2])
worker_flags = facts.known_flags(sys.argv[3])
# The tags check_dockerfile.sh holds to the project's version.
images = {gpu: (facts.documented_build(
    (root / "deploy" / "docker" / name).read_text()) or (None, None))[1]
    for gpu, name in ((False, "Dockerfile"), (True, "Dockerfile.cuda"))}
ROLES = (("host", "leaderTemplate", host_flags),
         ("worker", "workerTemplate", worker_flags))


def role_problems(template, role, accepted, size, gpu, where):
    """Problems of one role's pod template, and its flags."""
    containers = template.get("spec", {}).get("containers", [])
    if len(containers) != 1:
        return [f"{where}: {len(containers)} containers, expected one"], {}
    c = containers[0]
    out = []
    if "command" in c:
        out.append(f"{where}: sets command, which bypasses the entrypoint")
    args = c.get("args") or []
    if args[:1] != [role]:
        out.append(f"{where}: args start with {args[:1]}, not the role "
                   f"[{role!r}]")
    flags, bad = facts.parse_flags(args[1:], where)
    out += bad
    out += facts.unknown_flag_problems(flags, accepted, where)
    out += facts.degree_problems(flags, size, where)
    if c.get("image") != images[gpu]:
        out.append(f"{where}: image {c.get('image')!r} is not {images[gpu]!r},"
                   " the tag its Dockerfile's build command gives")
    limits = c.get("resources", {}).get("limits", {})
    if gpu and limits.get("nvidia.com/gpu") != 1:
        out.append(f"{where}: a GPU manifest's pod must request "
                   "nvidia.com/gpu: 1")
    if not gpu and "nvidia.com/gpu" in limits:
        out.append(f"{where}: requests a GPU but uses the CPU image")
    if "cpu" in limits and flags.get("threads") != str(limits["cpu"]):
        out.append(f"{where}: --threads={flags.get('threads')} is not its CPU "
                   f"limit {limits['cpu']}")
    model_dir = flags.get("model_dir", "")
    mounts = [m.get("mountPath", "").rstrip("/") + "/"
              for m in c.get("volumeMounts", [])]
    if not any(model_dir.startswith(m) for m in mounts):
        out.append(f"{where}: --model_dir={model_dir} is on no volume mount")
    return out, flags


def problems(doc, path, gpu):
    if doc.get("kind") != "LeaderWorkerSet":
        return [f"{path}: kind {doc.get('kind')!r} is not LeaderWorkerSet"]
    lwt = doc.get("spec", {}).get("leaderWorkerTemplate", {})
    size = lwt.get("size")
    if not isinstance(size, int) or size < 1:
        return [f"{path}: leaderWorkerTemplate.size {size!r} is not a "
                "positive integer"]
    out, flags = [], {}
    for role, key, accepted in ROLES:
        found, flags[role] = role_problems(lwt.get(key, {}), role, accepted,
                                           size, gpu, f"{path}: {key}")
        out += found
    for name in facts.SAME_ON_EVERY_RANK:
        if flags["host"].get(name) != flags["worker"].get(name):
            out.append(f"{path}: --{name} is {flags['host'].get(name)!r} on "
                       f"the host but {flags['worker'].get(name)!r} on the "
                       "workers")
    host = (lwt.get("leaderTemplate", {}).get("spec", {})
            .get("containers", [{}])[0])
    if "grpc_port" not in flags["host"]:
        out.append(f"{path}: the host sets no --grpc_port for its probes")
    port = flags["host"].get("grpc_port")
    for probe in ("readinessProbe", "livenessProbe"):
        if probe not in host:
            out.append(f"{path}: the host has no {probe}")
    # Health is NOT_SERVING while the host re-forms the group (minutes for a
    # real model): a liveness probe of it would restart the leader, and the
    # whole group, mid re-formation.
    for probe, kind in (("startupProbe", "grpc"), ("readinessProbe", "grpc"),
                        ("livenessProbe", "tcpSocket")):
        if probe in host and str(host[probe].get(kind, {}).get("port")) \
                != port:
            out.append(f"{path}: the host's {probe} is not a {kind} probe of "
                       f"--grpc_port {port}")
    return out


def first_container(doc, key):
    return doc["spec"]["leaderWorkerTemplate"][key]["spec"]["containers"][0]


def replace_arg(doc, key, old, new):
    args = first_container(doc, key)["args"]
    args[args.index(old)] = new


def probe_grpc_health(doc, probe):
    first_container(doc, "leaderTemplate")[probe] = {
        "grpc": {"port": 50051}, "periodSeconds": 10, "failureThreshold": 6}


def degree_arg(doc):
    return next(a for a in first_container(doc, "workerTemplate")["args"]
                if a.startswith("--ulysses_degree="))


# (what breaks, applies to GPU manifests?, break, words the report must hold)
BREAKS = [
    ("size off by one", None,
     lambda d: d["spec"]["leaderWorkerTemplate"].update(
         size=d["spec"]["leaderWorkerTemplate"]["size"] + 1),
     "group size"),
    ("worker's degree differs from the host's", None,
     lambda d: replace_arg(d, "workerTemplate", degree_arg(d),
                           "--ulysses_degree=1"),
     "on the host but"),
    ("misspelt flag", None,
     lambda d: replace_arg(d, "workerTemplate", degree_arg(d),
                           degree_arg(d).replace("ulysses", "ulyses")),
     "not a flag of the binary"),
    ("another image", None,
     lambda d: first_container(d, "leaderTemplate").update(
         image="ditserve:latest"),
     "the tag its Dockerfile"),
    ("role swapped", None,
     lambda d: first_container(d, "workerTemplate")["args"].__setitem__(
         0, "host"),
     "not the role"),
    ("probe on another port", None,
     lambda d: first_container(d, "leaderTemplate")["readinessProbe"].update(
         grpc={"port": 50052}),
     "readinessProbe is not a grpc probe"),
    ("liveness on gRPC health", None,
     lambda d: probe_grpc_health(d, "livenessProbe"),
     "livenessProbe is not a tcpSocket probe"),
    ("no GPU request", True,
     lambda d: first_container(d, "workerTemplate")["resources"]["limits"].pop(
         "nvidia.com/gpu"),
     "nvidia.com/gpu: 1"),
]

manifests = sorted((root / "deploy" / "k8s").glob("*.yaml"))
if not any(p.name.endswith("-gpu.yaml") for p in manifests):
    sys.exit("check_k8s_manifests: no *-gpu.yaml manifest in deploy/k8s")
failed = False
for path in manifests:
    rel = path.relative_to(root)
    gpu = path.name.endswith("-gpu.yaml")
    doc = yaml.safe_load(path.read_text())
    found = problems(doc, rel, gpu)
    for p in found:
        print(p, file=sys.stderr)
    failed |= bool(found)
    print(f"{rel}: {'ok' if not found else f'{len(found)} problem(s)'}")
    for name, gpu_only, apply, words in BREAKS:
        if gpu_only and not gpu:
            continue
        broken = copy.deepcopy(doc)
        apply(broken)
        found = problems(broken, rel, gpu)
        if not any(words in p for p in found):
            print(f"{rel}: break {name!r} was not reported with {words!r}: "
                  f"{found}", file=sys.stderr)
            failed = True
        else:
            print(f"{rel}: break {name!r} reported")
sys.exit(1 if failed else 0)
PY
