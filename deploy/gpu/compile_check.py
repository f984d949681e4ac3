#!/usr/bin/env python3
"""Checks that the tree's sources compile against a CUDA LibTorch 2.x.

The CUDA configuration (deploy/gpu/build.sh) needs a CUDA LibTorch, which a
machine without a lent GPU does not have. Debian 13's libtorch-cuda-dev holds
LibTorch 2.6's headers, c10d's NCCL ones included. This script fetches that
package with apt (no install: a private apt state under the cache folder) and
compiles every project source of a configured CPU build with -fsyntax-only,
its LibTorch include folders swapped for those headers and the CUDA build's
definitions added. It reads the build's compile_commands.json, so the CPU
build must be configured first (tests/run.sh or deploy/local/up.sh do that).

  deploy/gpu/compile_check.py [--build DIR] [--cache DIR] [--jobs N]
                              [--cuda-include DIR] [SUBSTRING ...]

SUBSTRINGs keep only the sources whose path contains one of them. Needs apt
access to deb.debian.org (or a libtorch-cuda-dev .deb already in the cache)
and the CUDA toolkit's headers. Exits 1 when a source does not compile.
"""

import argparse
import concurrent.futures
import glob
import json
import os
import shlex
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PACKAGE = "libtorch-cuda-dev"
SUITE = "trixie"
# What deploy/gpu/build.sh's configuration defines beyond the CPU build's
# (core/dist/CMakeLists.txt).
CUDA_DEFINITIONS = ["-DDITSERVE_WITH_NCCL", "-DUSE_C10D_NCCL", "-DDITSERVE_WITH_CUDA"]
DEBIAN_TORCH_INCLUDE = "/usr/include/torch/csrc/api/include"


def fetch_headers(cache):
    """The folder holding LibTorch 2.x's headers, downloading them if needed."""
    include = os.path.join(cache, "root", "usr", "include")
    if os.path.isdir(os.path.join(include, "torch")):
        return include
    debs = glob.glob(os.path.join(cache, PACKAGE + "_*.deb"))
    if not debs:
        lists = os.path.join(cache, "apt-lists")
        os.makedirs(os.path.join(lists, "partial"), exist_ok=True)
        sources = os.path.join(cache, "sources.list")
        with open(sources, "w") as out:
            out.write(f"deb http://deb.debian.org/debian {SUITE} main contrib\n")
        apt = ["apt-get", "-q", "-o", f"Dir::Etc::SourceList={sources}",
               "-o", "Dir::Etc::SourceParts=/dev/null",
               "-o", f"Dir::State::Lists={lists}",
               "-o", f"Dir::Cache={os.path.join(cache, 'apt-cache')}"]
        subprocess.run(apt + ["update"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(apt + ["download", PACKAGE], check=True, cwd=cache)
        debs = glob.glob(os.path.join(cache, PACKAGE + "_*.deb"))
    subprocess.run(["dpkg-deb", "-x", debs[0], os.path.join(cache, "root")],
                   check=True)
    return include


def syntax_command(entry, include, cuda_include):
    """The entry's compile command, against `include`, checking syntax only."""
    args = shlex.split(entry["command"])
    out = [args[0], "-isystem", include, "-isystem", cuda_include,
           "-fsyntax-only"] + CUDA_DEFINITIONS
    skip_next = False
    for arg in args[1:]:
        if skip_next:
            skip_next = False
        elif arg == "-o":
            skip_next = True
        elif arg == DEBIAN_TORCH_INCLUDE:
            out.append(os.path.join(include, "torch/csrc/api/include"))
        elif not arg.startswith(("-O", "-g")):
            out.append(arg)
    return out


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(REPO, "build"))
    parser.add_argument("--cache",
                        default=os.path.join(REPO, "build-torch2-headers"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--cuda-include", default="/usr/local/cuda/include")
    parser.add_argument("only", nargs="*")
    options = parser.parse_args()
    options.build = os.path.abspath(options.build)

    with open(os.path.join(options.build, "compile_commands.json")) as file:
        entries = [entry for entry in json.load(file)
                   if entry["file"].startswith(REPO + "/")
                   and not entry["file"].startswith(options.build + "/")]
    if options.only:
        entries = [entry for entry in entries
                   if any(part in entry["file"] for part in options.only)]
    include = fetch_headers(os.path.abspath(options.cache))

    def check(entry):
        result = subprocess.run(
            syntax_command(entry, include, options.cuda_include),
            cwd=entry["directory"], capture_output=True, text=True)
        return entry["file"], result.returncode, result.stderr

    start = time.monotonic()
    failed = []
    with concurrent.futures.ThreadPoolExecutor(options.jobs) as pool:
        for path, code, errors in pool.map(check, entries):
            if code != 0:
                failed.append(path)
                print(f"FAILED {os.path.relpath(path, REPO)}\n{errors}",
                      flush=True)
    print(json.dumps({"sources": len(entries), "failed": len(failed),
                      "seconds": round(time.monotonic() - start)}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
