#include "core/engine/compute_target.h"

#ifdef DITSERVE_WITH_CUDA
#include <ATen/cuda/CUDAContextLight.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDACachingAllocator.h>

#include "spdlog/spdlog.h"
#endif

#include <ATen/Context.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace ditserve::engine {
namespace {

struct DTypeChoice {
  const char* name;
  c10::ScalarType dtype;
};
constexpr DTypeChoice kDTypes[] = {{"float32", c10::kFloat},
                                   {"bfloat16", c10::kBFloat16},
                                   {"float16", c10::kHalf}};

absl::StatusOr<c10::Device> ParseDevice(const std::string& device,
                                        int local_rank) {
  if (device == "cpu") return c10::Device(c10::kCPU);
  if (device != "cuda") {
    return absl::InvalidArgumentError(
        absl::StrCat("--device ", device, ": allowed cpu, cuda"));
  }
  if (!at::hasCUDA()) {
    return absl::InvalidArgumentError(
        "--device cuda: no CUDA device is visible (a build against a CPU "
        "LibTorch, or a machine without a GPU; deploy/gpu/build.sh builds "
        "the CUDA configuration, README \"GPU\"); allowed here: cpu");
  }
  const int devices = static_cast<int>(at::getNumGPUs());
  if (local_rank < 0 || local_rank >= devices) {
    return absl::InvalidArgumentError(
        absl::StrCat("--device cuda: LOCAL_RANK ", local_rank,
                     " has no GPU of its own; this machine shows ", devices,
                     " (allowed LOCAL_RANK 0 to ", devices - 1, ")"));
  }
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(local_rank));
}

}  // namespace

absl::StatusOr<ComputeTarget> ParseComputeTarget(const std::string& device,
                                                 const std::string& dtype,
                                                 int local_rank) {
  const DTypeChoice* choice = nullptr;
  for (const DTypeChoice& candidate : kDTypes) {
    if (dtype == candidate.name) choice = &candidate;
  }
  if (choice == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--dtype ", dtype, ": allowed float32, bfloat16, float16"));
  }
  absl::StatusOr<c10::Device> placed = ParseDevice(device, local_rank);
  if (!placed.ok()) return placed.status();
  if (placed->is_cpu() && choice->dtype == c10::kHalf) {
    return absl::InvalidArgumentError(
        "--dtype float16 needs --device cuda: LibTorch's CPU kernels lack "
        "float16 convolution and normalisation; on a CPU use bfloat16 or "
        "float32");
  }
  return ComputeTarget{
      .device = device,
      .dtype = dtype,
      .placement = {.device = *placed, .dtype = choice->dtype}};
}

absl::Status MakeDeviceCurrent(const ComputeTarget& target) {
  const c10::Device& device = target.placement.device;
  if (!device.is_cuda()) return absl::OkStatus();
  try {
    c10::impl::getDeviceGuardImpl(device.type())->setDevice(device);
  } catch (const c10::Error& error) {
    return absl::InternalError(
        absl::StrCat("making ", device.str(),
                     " the current device: ", error.what_without_backtrace()));
  }
  return absl::OkStatus();
}

absl::Status LimitDeviceMemory(const ComputeTarget& target, double fraction) {
  if (!(fraction > 0 && fraction <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--cuda_memory_fraction ", fraction,
                     ": allowed above 0 and at most 1"));
  }
  const c10::Device& device = target.placement.device;
  if (!device.is_cuda()) {
    if (fraction == 1) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("--cuda_memory_fraction ", fraction,
                     " needs --device cuda; allowed on a CPU: 1"));
  }
#ifdef DITSERVE_WITH_CUDA
  try {
    // LibTorch makes the allocator's per-device state when it initialises
    // CUDA, lazily, at the first tensor on a GPU.
    at::empty({0}, at::TensorOptions().device(device));
    c10::cuda::CUDACachingAllocator::setMemoryFraction(fraction,
                                                       device.index());
    if (fraction < 1) {
      const double gib =
          static_cast<double>(
              at::cuda::getDeviceProperties(device.index())->totalGlobalMem) /
          (1 << 30);
      spdlog::info(
          "{} capped at {} of its {:.1f} GiB, {:.1f} GiB "
          "(--cuda_memory_fraction)",
          device.str(), fraction, gib, fraction * gib);
    }
  } catch (const c10::Error& error) {
    return absl::InternalError(
        absl::StrCat("limiting the memory of ", device.str(), " to ", fraction,
                     ": ", error.what_without_backtrace()));
  }
#endif
  return absl::OkStatus();
}

}  // namespace ditserve::engine
