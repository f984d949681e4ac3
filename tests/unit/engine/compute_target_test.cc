#include "core/engine/compute_target.h"

#include <ATen/Context.h>
#include <ATen/ops/empty.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace ditserve::engine {
namespace {

using ::testing::HasSubstr;

TEST(ComputeTargetTest, CpuTakesFloat32AndBfloat16) {
  for (const auto& [name, dtype] :
       {std::pair<std::string, c10::ScalarType>{"float32", c10::kFloat},
        {"bfloat16", c10::kBFloat16}}) {
    absl::StatusOr<ComputeTarget> target = ParseComputeTarget("cpu", name, 0);
    ASSERT_TRUE(target.ok()) << target.status();
    EXPECT_EQ(target->device, "cpu");
    EXPECT_EQ(target->dtype, name);
    EXPECT_TRUE(target->placement.device.is_cpu());
    EXPECT_EQ(target->placement.dtype, dtype);
  }
}

TEST(ComputeTargetTest, UnknownValuesNameTheFlagAndTheAllowedOnes) {
  absl::StatusOr<ComputeTarget> dtype = ParseComputeTarget("cpu", "fp8", 0);
  EXPECT_EQ(dtype.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(dtype.status().message()),
              HasSubstr("--dtype fp8: allowed float32, bfloat16, float16"));
  absl::StatusOr<ComputeTarget> device =
      ParseComputeTarget("tpu", "float32", 0);
  EXPECT_EQ(device.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(device.status().message()),
              HasSubstr("--device tpu: allowed cpu, cuda"));
}

TEST(ComputeTargetTest, Float16NeedsCuda) {
  absl::StatusOr<ComputeTarget> target =
      ParseComputeTarget("cpu", "float16", 0);
  EXPECT_EQ(target.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(target.status().message()),
              HasSubstr("--dtype float16 needs --device cuda"));
}

TEST(ComputeTargetTest, CudaNeedsAGpuForTheLocalRank) {
  absl::StatusOr<ComputeTarget> target =
      ParseComputeTarget("cuda", "bfloat16", 0);
  if (!at::hasCUDA()) {
    EXPECT_EQ(target.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(target.status().message()),
                HasSubstr("--device cuda: no CUDA device is visible"));
    return;
  }
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(target->placement.device, c10::Device(c10::kCUDA, 0));
  const int past_last = static_cast<int>(at::getNumGPUs());
  absl::StatusOr<ComputeTarget> beyond =
      ParseComputeTarget("cuda", "bfloat16", past_last);
  EXPECT_THAT(std::string(beyond.status().message()),
              HasSubstr("has no GPU of its own"));
}

TEST(ComputeTargetTest, TheLocalRanksGpuBecomesTheCurrentDevice) {
  // With one GPU the last is the current device already.
  if (!at::hasCUDA() || at::getNumGPUs() < 2) {
    GTEST_SKIP() << "needs two GPUs to tell them apart";
  }
  const int last = static_cast<int>(at::getNumGPUs()) - 1;
  absl::StatusOr<ComputeTarget> target =
      ParseComputeTarget("cuda", "bfloat16", last);
  ASSERT_TRUE(target.ok()) << target.status();
  ASSERT_TRUE(MakeDeviceCurrent(*target).ok());
  EXPECT_EQ(c10::impl::getDeviceGuardImpl(c10::kCUDA)->getDevice(),
            c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(last)));
}

TEST(ComputeTargetTest, ACpuTargetLeavesTheCurrentDeviceAlone) {
  absl::StatusOr<ComputeTarget> target =
      ParseComputeTarget("cpu", "float32", 0);
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_TRUE(MakeDeviceCurrent(*target).ok());
}

TEST(ComputeTargetTest, AMemoryFractionIsAboveZeroAndAtMostOne) {
  absl::StatusOr<ComputeTarget> target =
      ParseComputeTarget("cpu", "float32", 0);
  ASSERT_TRUE(target.ok()) << target.status();
  for (const double fraction : {0.0, -0.5, 1.5, std::nan("")}) {
    const absl::Status limited = LimitDeviceMemory(*target, fraction);
    EXPECT_EQ(limited.code(), absl::StatusCode::kInvalidArgument) << fraction;
    EXPECT_THAT(std::string(limited.message()),
                HasSubstr(": allowed above 0 and at most 1"));
  }
}

TEST(ComputeTargetTest, ACpuTakesNoMemoryFractionButAll) {
  absl::StatusOr<ComputeTarget> target =
      ParseComputeTarget("cpu", "float32", 0);
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_TRUE(LimitDeviceMemory(*target, 1).ok());
  const absl::Status limited = LimitDeviceMemory(*target, 0.25);
  EXPECT_EQ(limited.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(limited.message()),
              HasSubstr("--cuda_memory_fraction 0.25 needs --device cuda; "
                        "allowed on a CPU: 1"));
}

TEST(ComputeTargetTest, AnAllocationPastTheFractionRunsOutOfMemory) {
  if (!at::hasCUDA()) GTEST_SKIP() << "needs a GPU";
  absl::StatusOr<ComputeTarget> target =
      ParseComputeTarget("cuda", "float32", 0);
  ASSERT_TRUE(target.ok()) << target.status();
  // A ten-thousandth of any GPU made is far below one GiB.
  ASSERT_TRUE(LimitDeviceMemory(*target, 1e-4).ok());
  const int64_t elements = (int64_t{1} << 30) / sizeof(float);
  EXPECT_THROW(at::empty({elements},
                         at::TensorOptions().device(target->placement.device)),
               c10::OutOfMemoryError);
  ASSERT_TRUE(LimitDeviceMemory(*target, 1).ok());
  EXPECT_NO_THROW(at::empty(
      {elements}, at::TensorOptions().device(target->placement.device)));
}

}  // namespace
}  // namespace ditserve::engine
