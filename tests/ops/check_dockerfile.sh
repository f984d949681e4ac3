#!/usr/bin/env bash
# Checks deploy/docker/Dockerfile and Dockerfile.cuda without building them
# (no container runtime here): each documents its build command with the
# project's version as the tag; its build stage is debian:12 running
# deploy/install-deps.sh, then tests/run.sh's cmake configure (the CUDA one
# adding only its -D options) and build commands for the binaries the
# runtime stage copies; the runtime stage is debian:12, runs the entrypoint
# as a non-root numeric USER and installs only packages this machine's apt
# knows (Debian 12's). The CPU image's packages must provide every shared
# library the built binaries load (their NEEDED entries, mapped to packages
# with dpkg -S), and a package none of them loads must be named in a comment
# saying why. The CUDA image's are the CPU image's without Debian's LibTorch,
# OpenBLAS and oneDNN (the CPU build's GEMM). Both images ship exactly the
# checked files: the binaries to /opt/ditserve/bin/ and the SentencePiece
# shim, which the binaries load at run time from their ../lib, to
# /opt/ditserve/lib/. Then breaks copies of the files one way at a time and
# fails unless each break is reported.
#
#   tests/ops/check_dockerfile.sh [FILE...]   (default: build/bin/ of
#   ditserve-host, ditserve-worker, ditctl, ditserve-make-checkpoint, and
#   build/lib/libditserve_sentencepiece.so)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
if [[ $# -eq 0 ]]; then
  set -- "${root}"/build/bin/{ditserve-host,ditserve-worker,ditctl,ditserve-make-checkpoint} \
    "${root}"/build/lib/libditserve_sentencepiece.so
fi

exec /usr/bin/python3 - "${root}" "$@" <<'PY'
import functools
import os
import pathlib
import re
import shlex
import subprocess
import sys

root = pathlib.Path(sys.argv[1])
binaries = sys.argv[2:]
sys.path.insert(0, str(root / "tests" / "ops"))
import deploy_facts as facts  # noqa: E402


def instructions(text):
    """[(INSTRUCTION, arguments)], continuation lines joined, comments out."""
    out, current = [], ""
    for line in text.splitlines():
        if line.strip().startswith("#"):
            continue
        current += line.rstrip()
        if current.endswith("\\"):
            current = current[:-1] + " "
            continue
        if current.strip():
            word, _, rest = current.strip().partition(" ")
            out.append((word.upper(), " ".join(rest.split())))
        current = ""
    return out


def stages(text):
    """[(FROM arguments, [instructions of the stage])]"""
    out = []
    for word, rest in instructions(text):
        if word == "FROM":
            out.append((rest, []))
        elif out:
            out[-1][1].append((word, rest))
    return out


def commands(stage):
    """The shell commands of a stage's RUNs, split at &&, --mount dropped."""
    return [shlex.split(c) for word, rest in stage if word == "RUN"
            for c in re.sub(r"^(--\S+\s+)+", "", rest).split("&&")]


def run_sh_cmake():
    """tests/run.sh's configure and build commands, $build_dir made its
    default, and that default."""
    text = (root / "tests" / "run.sh").read_text()
    build_dir = re.search(r"build_dir=\$\{DITSERVE_BUILD_DIR:-(\S+)\}",
                          text).group(1)
    found = [shlex.split(line.replace('"$build_dir"', build_dir))
             for line in text.splitlines() if line.startswith("cmake ")]
    configure = [c for c in found if c[1] == "-S"]
    build = [c for c in found if c[1] == "--build"]
    if len(configure) != 1 or len(build) != 1:
        sys.exit("check_dockerfile: tests/run.sh has not one cmake configure "
                 "and one cmake --build line")
    return configure[0], build[0], build_dir


@functools.lru_cache(maxsize=None)
def in_apt(package):
    shown = subprocess.run(["apt-cache", "show", "--no-all-versions", package],
                           capture_output=True, text=True)
    return shown.returncode == 0 and bool(shown.stdout)


def build_stage_problems(build, runtime, where, cuda):
    out = []
    runs = commands(build)
    configure, build_cmd, build_dir = run_sh_cmake()
    first = {name: next((i for i, c in enumerate(runs) if test(c)), None)
             for name, test in (
                 ("deploy/install-deps.sh",
                  lambda c: c == ["deploy/install-deps.sh"]),
                 ("cmake -S", lambda c: c[:2] == ["cmake", "-S"]),
                 ("cmake --build", lambda c: c[:2] == ["cmake", "--build"]))}
    if None in first.values():
        return [f"{where}: the build stage does not run "
                f"{[n for n, i in first.items() if i is None]}"], []
    deps, conf, make = first.values()
    if not deps < conf < make:
        out.append(f"{where}: install-deps.sh, configure and build run out "
                   "of order")
    extra = runs[conf][len(configure):]
    if runs[conf][:len(configure)] != configure:
        out.append(f"{where}: configures with {shlex.join(runs[conf])}, not "
                   f"tests/run.sh's {shlex.join(configure)}")
    want_extra = {"-DDITSERVE_CUDA=ON", "-DTorch_DIR="} if cuda else set()
    if {re.sub(r"=.+", "=", e) if e.startswith("-DTorch_DIR=") else e
            for e in extra} != want_extra:
        out.append(f"{where}: configure options {extra}, expected "
                   f"{sorted(want_extra)}")
    n = len(build_cmd)
    targets = runs[make][n + 1:]
    if runs[make][:n + 1] != build_cmd + ["--target"]:
        out.append(f"{where}: builds with {shlex.join(runs[make])}, not "
                   f"tests/run.sh's {shlex.join(build_cmd)} --target ...")
    workdir = next((r for w, r in build if w == "WORKDIR"), "")
    copied = {"bin": [], "lib": []}
    for word, rest in runtime:
        if word == "COPY" and rest.startswith("--from=build "):
            *sources, dest = rest.split()[1:]
            for folder, names in copied.items():
                prefix = f"{workdir}/{build_dir}/{folder}/"
                for source in (s for s in sources if s.startswith(prefix)):
                    names.append(source[len(prefix):])
                    if dest != f"/opt/ditserve/{folder}/":
                        out.append(f"{where}: copies {source} to {dest}, not "
                                   f"/opt/ditserve/{folder}/")
    if not copied["bin"] or sorted(copied["bin"]) != sorted(targets):
        out.append(f"{where}: copies {copied['bin']} from "
                   f"{workdir}/{build_dir}/bin/ but builds --target {targets}")
    return out, copied["bin"] + copied["lib"]


def runtime_problems(runtime, where):
    out = []
    entry = "/opt/ditserve/bin/ditserve-entrypoint"
    if ("COPY", f"deploy/docker/entrypoint.sh {entry}") not in runtime or \
            ("ENTRYPOINT", f'["{entry}"]') not in runtime:
        out.append(f"{where}: the entrypoint is not deploy/docker/"
                   f"entrypoint.sh at {entry}")
    users = [r.split(":")[0] for w, r in runtime if w == "USER"]
    if not users or not re.fullmatch(r"[1-9][0-9]*", users[-1]):
        out.append(f"{where}: the runtime stage runs as "
                   f"{users[-1] if users else 'root'!r}, not as a non-root "
                   "numeric USER")
    packages = [a for c in commands(runtime) if c[:2] == ["apt-get", "install"]
                for a in c[2:] if not a.startswith("-")]
    out += [f"{where}: runtime package {p} is not known to apt here (not in "
            "Debian 12, or apt-get update never ran)"
            for p in packages if not in_apt(p)]
    return out, packages


def problems_of(text, where, cuda, cpu_packages=()):
    """The problems of one Dockerfile's text, and its runtime packages;
    cpu_packages: the CPU image's, for the CUDA one."""
    out = []
    tag = f"ditserve:{facts.project_version(root)}" + ("-cuda" if cuda else "")
    if facts.documented_build(text) != (where, tag):
        out.append(f"{where}: its header does not document "
                   f"`docker build -f {where} -t {tag} .`")
    found = stages(text)
    if [f for f, _ in found] != ["debian:12 AS build", "debian:12"]:
        return out + [f"{where}: stages {[f for f, _ in found]}, expected "
                      "'debian:12 AS build' then 'debian:12'"], []
    (_, build), (_, runtime) = found
    found, copied = build_stage_problems(build, runtime, where, cuda)
    out += found
    found, packages = runtime_problems(runtime, where)
    out += found
    if sorted(copied) != sorted(shipped):
        out.append(f"{where}: ships {copied}, but the files checked for "
                   f"their libraries are {shipped}")
    if not cuda:
        comments = "\n".join(line for line in text.splitlines()
                             if line.strip().startswith("#"))
        out += [f"{where}: runtime lacks {p} ({', '.join(sorted(needs[p]))})"
                for p in sorted(set(needs) - set(packages))]
        out += [f"{where}: runtime package {p} provides no library the "
                "binaries load, and no comment names it saying why"
                for p in sorted(set(packages) - set(needs))
                if not re.search(rf"(?<![\w.+-]){re.escape(p)}(?![\w.+-])",
                                 comments)]
    else:
        want = {p for p in cpu_packages
                if not p.startswith("libtorch")
                and p not in ("libopenblas0-pthread", "libdnnl2")}
        if set(packages) != want:
            out.append(f"{where}: runtime packages differ from Dockerfile's "
                       "without Debian's LibTorch, OpenBLAS and oneDNN by "
                       f"{sorted(set(packages) ^ want)}")
    return out, packages


@functools.lru_cache(maxsize=None)
def owner(path):
    """The Debian package that installs `path`, or None. dpkg knows the path
    a package installs, which may be a link to the file."""
    for candidate in (path, os.path.realpath(path)):
        found = subprocess.run(["dpkg", "-S", candidate], capture_output=True,
                               text=True)
        if found.returncode == 0:
            return found.stdout.split(":")[0]
    return None


def needed_packages(binary):
    """{package: sonames} of the Debian packages owning the libraries that
    `binary` names in its NEEDED entries."""
    dynamic = subprocess.run(["readelf", "-d", binary], capture_output=True,
                             text=True, check=True).stdout
    linked = subprocess.run(["ldd", binary], capture_output=True, text=True,
                            check=True).stdout
    resolved = dict(re.findall(r"^\s*(\S+) => (\S+)", linked, re.M))
    out = {}
    for soname in re.findall(r"\(NEEDED\)\s+Shared library: \[(.+)\]",
                             dynamic):
        package = owner(resolved[soname]) if soname in resolved else None
        if package is None:
            sys.exit(f"check_dockerfile: {binary} loads {soname} "
                     f"({resolved.get(soname)}), which no Debian package "
                     "installs")
        out.setdefault(package, set()).add(soname)
    return out


def drop_package(text, package):
    """text without `package` in its runtime apt-get install."""
    head, _, tail = text.rpartition("apt-get install")
    return head + "apt-get install" + re.sub(
        rf"(?<=\s){re.escape(package)}(?=\s)", "", tail, count=1)


shipped = sorted(pathlib.Path(b).name for b in binaries)
needs = {}
for binary in binaries:
    for package, sonames in needed_packages(binary).items():
        needs.setdefault(package, set()).update(sonames)
print(f"{' '.join(shipped)} load libraries of {len(needs)} packages: "
      f"{' '.join(sorted(needs))}")
texts = {cuda: (root / "deploy" / "docker" / name).read_text()
         for cuda, name in ((False, "Dockerfile"), (True, "Dockerfile.cuda"))}
where = {False: "deploy/docker/Dockerfile",
         True: "deploy/docker/Dockerfile.cuda"}


cpu_packages = problems_of(texts[False], where[False], False)[1]


def problems(cuda, text):
    return problems_of(text, where[cuda], cuda, cpu_packages)[0]


failed = False
for cuda in (False, True):
    found = problems(cuda, texts[cuda])
    for p in found:
        print(p, file=sys.stderr)
    failed |= bool(found)
    print(f"{where[cuda]}: {'ok' if not found else 'FAILED'}")

needed = sorted(needs)[0]
# (what breaks, CUDA file?, break, words the report must hold)
BREAKS = [
    ("root user", False, lambda t: t.replace("USER 10001:10001", "USER root"),
     "non-root"),
    ("no install-deps.sh", False,
     lambda t: t.replace("RUN deploy/install-deps.sh", "RUN true"),
     "deploy/install-deps.sh"),
    ("another build folder", False, lambda t: t.replace("-B build", "-B out"),
     "not tests/run.sh's"),
    ("a target not built", False,
     lambda t: t.replace("ditserve-worker ditctl", "ditserve-worker"),
     "but builds --target"),
    (f"{needed} left out", False, lambda t: drop_package(t, needed),
     f"runtime lacks {needed}"),
    ("a package Debian lacks", False,
     lambda t: t.replace("apt-get install -y --no-install-recommends",
                         "apt-get install -y --no-install-recommends "
                         "libditserve-nonexistent0"),
     "not known to apt"),
    ("the SentencePiece shim left out", True,
     lambda t: re.sub(r"COPY --from=build \S+libditserve_sentencepiece\.so "
                      r"\S+\n", "", t),
     "ships"),
    ("another tag", False,
     lambda t: t.replace("-t ditserve:", "-t ditserve-cpu:"), "header"),
    ("no CUDA option", True,
     lambda t: t.replace("-DDITSERVE_CUDA=ON", ""), "configure options"),
]
for name, cuda, apply, words in BREAKS:
    broken = apply(texts[cuda])
    found = problems(cuda, broken) if broken != texts[cuda] else []
    if not any(words in p for p in found):
        print(f"{where[cuda]}: break {name!r} was not reported with "
              f"{words!r}: {found}", file=sys.stderr)
        failed = True
    else:
        print(f"{where[cuda]}: break {name!r} reported")
sys.exit(1 if failed else 0)
PY
