#include "core/engine/rank_memory.h"

#ifdef DITSERVE_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/util/Exception.h>
#endif

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "spdlog/spdlog.h"

namespace ditserve::engine {
namespace {

std::string Mebibytes(int64_t bytes) {
  return absl::StrFormat("%.0f MiB", static_cast<double>(bytes) / (1 << 20));
}

}  // namespace

base::ProcessMemory ReadRankMemory([[maybe_unused]] const c10::Device& device) {
  base::ProcessMemory memory = base::ReadProcessMemory();
#ifdef DITSERVE_WITH_CUDA
  if (device.is_cuda()) {
    try {
      const auto stats =
          c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
      // Each statistic is an array over the allocator's pools; element 0
      // (StatType::AGGREGATE) sums them.
      memory.device_allocated_bytes = stats.allocated_bytes[0].current;
      memory.device_peak_allocated_bytes = stats.allocated_bytes[0].peak;
      memory.device_reserved_bytes = stats.reserved_bytes[0].current;
    } catch (const c10::Error& error) {
      spdlog::warn("reading the memory of {}: {}", device.str(),
                   error.what_without_backtrace());
    }
  }
#endif
  return memory;
}

std::string DescribeRankMemory(const base::ProcessMemory& memory) {
  std::string text =
      absl::StrCat(Mebibytes(memory.resident_bytes), " resident (peak ",
                   Mebibytes(memory.peak_resident_bytes), ")");
  if (memory.on_gpu()) {
    absl::StrAppend(&text, ", ", Mebibytes(memory.device_allocated_bytes),
                    " allocated on the GPU (peak ",
                    Mebibytes(memory.device_peak_allocated_bytes), "), ",
                    Mebibytes(memory.device_reserved_bytes), " reserved");
  }
  return text;
}

}  // namespace ditserve::engine
