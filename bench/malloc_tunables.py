"""GLIBC_TUNABLES strings equal to what core/base/allocator_tuning.cc sets
with mallopt, for processes that do not tune malloc themselves (Python) and
for A/B runs of ditserve's binaries, which leave malloc alone when the
environment tunes it."""

# No mmap threshold and no trimming: freed blocks stay in the heap for reuse.
KEEP_FREED = ("glibc.malloc.mmap_threshold=2147483647:"
              "glibc.malloc.trim_threshold=2147483647")
# What ditserve's ranks set: the same on one arena for every thread.
DITSERVE = KEEP_FREED + ":glibc.malloc.arena_max=1"
