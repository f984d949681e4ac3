#include "core/base/allocator_tuning.h"

#include <malloc.h>
#include <unistd.h>

#include <climits>
#include <string>

#include "absl/strings/match.h"

namespace ditserve::base {
namespace {

bool EnvironmentTunesMalloc() {
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (absl::StartsWith(*entry, "MALLOC_") ||
        absl::StartsWith(*entry, "GLIBC_TUNABLES=")) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string KeepFreedMemoryForReuse() {
  if (EnvironmentTunesMalloc()) {
    return "malloc tuned by the environment, left as it is";
  }
  // mallopt takes an int: INT_MAX bytes is beyond any one allocation here
  // for the mmap threshold, and beyond any free top of the heap for trimming.
  // The thresholds govern the main arena only: a thread arena's heap is at
  // most 64 MiB, so it maps every larger block anew, and the host computes
  // on its scheduler thread. One arena puts every thread's tensors on the
  // main heap.
  if (mallopt(M_MMAP_THRESHOLD, INT_MAX) != 1 ||
      mallopt(M_TRIM_THRESHOLD, INT_MAX) != 1 || mallopt(M_ARENA_MAX, 1) != 1) {
    return "malloc keeps its defaults (mallopt refused)";
  }
  return "malloc keeps freed memory for reuse (one arena, no mmap threshold, "
         "no trim)";
}

}  // namespace ditserve::base
