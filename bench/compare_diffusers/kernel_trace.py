"""What a Chrome trace from Kineto holds, summarised: the one torch.profiler
writes for diffusers and the one ditserve-bench-compare-worker writes for
ditserve ("trace"), so that the two sides' kernels can be set side by side."""

import collections
import gzip
import json
import shutil


def summarise(path, top=15):
    """GPU kernel time, how busy the GPU was between its first and last
    kernel, the `top` kernels by time, and the CUDA runtime calls by count
    (synchronisations and copies show there)."""
    with open(path) as trace:
        events = json.load(trace)["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel" and "dur" in e]
    runtime = collections.Counter(e["name"] for e in events
                                  if e.get("cat") in ("cuda_runtime", "cuda_driver"))
    time_by_kernel = collections.Counter()
    count_by_kernel = collections.Counter()
    for kernel in kernels:
        time_by_kernel[kernel["name"]] += kernel["dur"]
        count_by_kernel[kernel["name"]] += 1
    kernel_us = sum(time_by_kernel.values())
    span_us = (max(k["ts"] + k["dur"] for k in kernels) - min(k["ts"] for k in kernels)
               if kernels else 0)
    return {
        "kernels": len(kernels),
        "kernel_ms": round(kernel_us / 1000, 2),
        "kernel_span_ms": round(span_us / 1000, 2),
        "gpu_busy_fraction": round(kernel_us / span_us, 3) if span_us else None,
        "top_kernels": [{"name": name[:120], "ms": round(us / 1000, 2),
                         "count": count_by_kernel[name]}
                        for name, us in time_by_kernel.most_common(top)],
        "runtime_calls": dict(runtime.most_common(12)),
    }


def keep(path, folder):
    """A gzip copy of the trace in `folder` (e.g. to bring back from a lent
    machine), named after it."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(path, "rb") as source, gzip.open(folder / f"{path.name}.gz", "wb") as kept:
        shutil.copyfileobj(source, kept)
