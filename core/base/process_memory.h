#ifndef DITSERVE_CORE_BASE_PROCESS_MEMORY_H_
#define DITSERVE_CORE_BASE_PROCESS_MEMORY_H_

#include <cstdint>

namespace ditserve::base {

struct ProcessMemory {
  int64_t resident_bytes = 0;
  int64_t peak_resident_bytes = 0;
  // On a GPU (engine::ReadRankMemory), what LibTorch's caching allocator
  // holds for tensors now and at its peak, and what it has reserved from the
  // driver; zero on a CPU.
  int64_t device_allocated_bytes = 0;
  int64_t device_peak_allocated_bytes = 0;
  int64_t device_reserved_bytes = 0;

  // Whether the device fields describe a GPU: a rank on one has reserved
  // memory there from its weights on.
  bool on_gpu() const { return device_reserved_bytes > 0; }
};

// This process's resident set now and at its peak (VmRSS and VmHWM of
// /proc/self/status); zero where the kernel does not report them.
ProcessMemory ReadProcessMemory();

}  // namespace ditserve::base

#endif  // DITSERVE_CORE_BASE_PROCESS_MEMORY_H_
