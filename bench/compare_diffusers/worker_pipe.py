"""ditserve's side of the comparisons of this folder: one
ditserve-bench-compare-worker process per checkpoint folder, driven over a
pipe (bench/compare_worker.cc), and how their timings are summarised."""

import json
import statistics
import subprocess
import sys
import time


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


def rgb(images):
    """A pipeline's PIL images as uint8 [N, H, W, 3], the layout of the
    worker's "rgb"."""
    import numpy as np
    import torch
    return torch.from_numpy(np.stack([np.asarray(image) for image in images]))


def videos_rgb(videos):
    """A video pipeline's PIL frames as uint8 [B, F, H, W, 3]."""
    import torch
    return torch.stack([rgb(frames) for frames in videos])


def timed_on_cpu(run):
    """`run`'s output and milliseconds."""
    start = time.perf_counter()
    output = run()
    return output, (time.perf_counter() - start) * 1000


def compare(workers, request, output_path, output, run, repeats, timed=timed_on_cpu):
    """Times diffusers' `run` against each of `workers` ({side: Worker}) on
    `request`, alternating run by run after one warm-up each. The "ditserve"
    side's warm-up writes `output` to `output_path`, against which `run`'s
    output is compared. Returns the milliseconds of every side (and of
    "diffusers") and the element-wise absolute difference."""
    from safetensors.torch import load_file
    for side, worker in workers.items():
        worker.run(**request, **({"output": str(output_path)} if side == "ditserve" else {}))
    reference, _ = timed(run)
    difference = (load_file(str(output_path))[output].double() -
                  reference.cpu().double()).abs()
    timings = {side: [] for side in (*workers, "diffusers")}
    for _ in range(repeats):
        for side, worker in workers.items():
            settle()
            timings[side].append(worker.run(**request))
        settle()
        timings["diffusers"].append(timed(run)[1])
    return timings, difference


def settle():
    """Waits out the spinning of the previous run's idle threads: OpenBLAS's
    workers busy-wait about 2^28 cycles after each product and LibTorch's
    pthreadpool workers a million iterations, and on two cores either took a
    core from whichever side ran next."""
    time.sleep(SETTLE_SECONDS)


SETTLE_SECONDS = 0.5


def summary(milliseconds):
    return {"median": round(statistics.median(milliseconds), 2),
            "min": round(min(milliseconds), 2), "max": round(max(milliseconds), 2)}
