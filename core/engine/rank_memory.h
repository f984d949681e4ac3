#ifndef DITSERVE_CORE_ENGINE_RANK_MEMORY_H_
#define DITSERVE_CORE_ENGINE_RANK_MEMORY_H_

#include <c10/core/Device.h>

#include <string>

#include "core/base/process_memory.h"

namespace ditserve::engine {

// This process's resident memory (base::ReadProcessMemory) and, when the
// rank computes on a CUDA `device` (in a CUDA build), what LibTorch's
// caching allocator holds and has reserved there.
base::ProcessMemory ReadRankMemory(const c10::Device& device);

// "X MiB resident (peak Y MiB)", and with device memory ", A MiB allocated
// on the GPU (peak B MiB), C MiB reserved", for the start-up log.
std::string DescribeRankMemory(const base::ProcessMemory& memory);

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_RANK_MEMORY_H_
