#ifndef DITSERVE_CORE_ENGINE_COMPUTE_TARGET_H_
#define DITSERVE_CORE_ENGINE_COMPUTE_TARGET_H_

// Where and in which dtype a rank computes (--device, --dtype), as the
// start-up agreement, GetServerInfo and ditserve_build_info report it.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/models/component_weights.h"

namespace ditserve::engine {

struct ComputeTarget {
  // The flags' values: "cpu" or "cuda"; "float32", "bfloat16" or
  // "float16". Every rank must agree on them.
  std::string device;
  std::string dtype;
  // With the CUDA device LOCAL_RANK picks.
  models::Placement placement;
};

// INVALID_ARGUMENT naming the flag and the allowed values for an unknown
// device or dtype, for CUDA in a build or on a machine without it, for a
// LOCAL_RANK without a device of its own, and for float16 on a CPU (whose
// LibTorch kernels lack float16 convolution and normalisation).
absl::StatusOr<ComputeTarget> ParseComputeTarget(const std::string& device,
                                                 const std::string& dtype,
                                                 int local_rank);

// Makes the GPU of `target` the calling thread's current device (nothing on
// a CPU). LibTorch and NCCL put what names no device index (a CUDA context,
// a stream, an event) on the current device, which is GPU 0 in every new
// thread: without this, each rank of a machine would make a context there.
// The start-up thread calls it; RankLoop and the preview decoder, which run
// on threads of their own, hold a device guard instead.
absl::Status MakeDeviceCurrent(const ComputeTarget& target);

// Caps what LibTorch's caching allocator takes of the GPU of `target` at
// `fraction` of its memory (--cuda_memory_fraction), leaving the rest to
// other processes on that GPU; a run that needs more fails as on a full GPU
// (RESOURCE_EXHAUSTED). INVALID_ARGUMENT naming the flag and the allowed
// values for a fraction outside (0, 1], and for one below 1 on a CPU.
absl::Status LimitDeviceMemory(const ComputeTarget& target, double fraction);

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_COMPUTE_TARGET_H_
