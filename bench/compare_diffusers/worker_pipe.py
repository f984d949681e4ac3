"""ditserve's side of the comparisons of this folder: one
ditserve-bench-compare-worker process per checkpoint folder, driven over a
pipe (bench/compare_worker.cc), and how their timings are summarised."""

import json
import statistics
import subprocess
import sys


class Worker:
    """ditserve-bench-compare-worker on one checkpoint folder; `flags` go to
    the worker (--device, --dtype), its log to `stderr` (a file; by default
    nowhere)."""

    def __init__(self, binary, checkpoint, flags=(), stderr=subprocess.DEVNULL):
        self.process = subprocess.Popen(
            [str(binary), f"--checkpoint={checkpoint}", *flags],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True)

    def run(self, **command):
        """The op's milliseconds, as the worker timed it."""
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            sys.exit(f"compare_diffusers: the worker ended on {command}")
        reply = json.loads(line)
        if "error" in reply:
            sys.exit(f"compare_diffusers: worker: {reply['error']} on {command}")
        return reply["ms"]

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def summary(milliseconds):
    return {"median": round(statistics.median(milliseconds), 2),
            "min": round(min(milliseconds), 2), "max": round(max(milliseconds), 2)}
