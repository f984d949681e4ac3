#include "core/base/guarded.h"

#include <c10/util/Exception.h>

#include <stdexcept>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/base/status_error.h"
#include "gtest/gtest.h"

namespace ditserve::base {
namespace {

TEST(GuardedTest, ValueBodyGivesStatusOrOfTheValue) {
  absl::StatusOr<int> value = Guarded("adding", [] { return 2 + 3; });
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(*value, 5);
}

TEST(GuardedTest, OtherExceptionsBecomeInternalNamingTheContext) {
  absl::StatusOr<int> value = Guarded("VaeDecoder forward", []() -> int {
    throw std::runtime_error("shape [2, 3] is invalid");
  });
  EXPECT_EQ(value.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(value.status().message(),
            "VaeDecoder forward: shape [2, 3] is invalid");
}

TEST(GuardedTest, StatusErrorKeepsItsCodeAndMessage) {
  absl::Status status = Guarded("ring attention", []() -> absl::Status {
    throw StatusError(absl::UnavailableError("rank 3 was lost"));
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), "rank 3 was lost");
}

TEST(GuardedTest, StatusOrBodiesAreNotWrappedTwice) {
  absl::StatusOr<int> refused =
      Guarded("checking", []() -> absl::StatusOr<int> {
        return absl::InvalidArgumentError("height 130 is not a multiple of 16");
      });
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  absl::Status void_body = Guarded("nothing", [] {});
  EXPECT_TRUE(void_body.ok());
}

TEST(GuardedTest, GuardedAsGivesOtherExceptionsTheCodeAndOneLine) {
  absl::Status status =
      GuardedAs(absl::StatusCode::kUnavailable, "forming the Gloo group", [] {
        throw std::runtime_error("connection refused\nException raised from");
      });
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), "forming the Gloo group: connection refused");
}

TEST(GuardedTest, InvalidArgumentExceptionsAreInvalidArgument) {
  absl::Status status =
      GuardedAs(absl::StatusCode::kResourceExhausted, "building the model",
                [] { throw std::invalid_argument("blocks [3, 9) of 6"); });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "building the model: blocks [3, 9) of 6");
}

TEST(GuardedTest, DeviceOutOfMemoryIsResourceExhaustedWhateverTheCode) {
  // Thrown the way LibTorch's CUDA caching allocator throws it.
  const auto run_out = [] {
    TORCH_CHECK_WITH(OutOfMemoryError, false,
                     "CUDA out of memory. Tried to allocate 2.00 GiB.");
  };
  absl::Status status = Guarded("denoise", run_out);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(),
            "denoise: CUDA out of memory. Tried to allocate 2.00 GiB.");
  EXPECT_EQ(
      GuardedAs(absl::StatusCode::kUnavailable, "ring pass", run_out).code(),
      absl::StatusCode::kResourceExhausted);
}

TEST(GuardedTest, OtherLibTorchErrorsGetTheGuardsCode) {
  // The CPU allocator's failure is a plain c10::Error: it cannot be told from
  // a bug by its type.
  absl::Status status = GuardedAs(
      absl::StatusCode::kUnavailable, "ring pass",
      [] { TORCH_CHECK(false, "DefaultCPUAllocator: can't allocate memory"); });
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(status.message(),
            "ring pass: DefaultCPUAllocator: can't allocate memory");
}

}  // namespace
}  // namespace ditserve::base
