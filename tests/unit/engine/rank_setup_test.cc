#include "core/engine/rank_setup.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <limits>
#include <ostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "core/engine/rank_flags.h"

namespace ditserve::engine {
namespace {

using ::testing::HasSubstr;

struct BadFlag {
  const char* name;
  void (*set)();
  const char* message;
};

void PrintTo(const BadFlag& flag, std::ostream* out) { *out << flag.name; }

class RankSetupBadFlagTest : public ::testing::TestWithParam<BadFlag> {};

TEST_P(RankSetupBadFlagTest, FailsBeforeTheBuiltInModelIsWritten) {
  absl::FlagSaver restore_flags;
  // Its own folder: build trees may run this test at the same time.
  const std::filesystem::path cache =
      std::filesystem::path(::testing::TempDir()) /
      ("rank_setup_model_cache_" + std::to_string(getpid()));
  std::filesystem::create_directories(cache);
  absl::SetFlag(&FLAGS_model_dir, "");
  absl::SetFlag(&FLAGS_model_cache_dir, cache.string());
  GetParam().set();

  absl::StatusOr<RankSetup> setup = RankSetupFromFlags(dist::RankEnv{});

  EXPECT_EQ(setup.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(setup.status().message()),
              HasSubstr(GetParam().message));
  EXPECT_TRUE(std::filesystem::is_empty(cache))
      << "the built-in model was written before the flag was checked";
  std::filesystem::remove_all(cache);
}

INSTANTIATE_TEST_SUITE_P(
    Flags, RankSetupBadFlagTest,
    ::testing::Values(
        BadFlag{"dtype", [] { absl::SetFlag(&FLAGS_dtype, "fp8"); },
                "--dtype fp8: allowed float32, bfloat16, float16"},
        BadFlag{"cuda_memory_fraction_on_a_cpu",
                [] { absl::SetFlag(&FLAGS_cuda_memory_fraction, 0.5); },
                "rank flags: --cuda_memory_fraction 0.5 needs --device cuda"},
        // Infinite, its milliseconds overflowed to a negative timeout.
        BadFlag{"infinite_collective_timeout",
                [] {
                  absl::SetFlag(&FLAGS_collective_timeout_s,
                                std::numeric_limits<double>::infinity());
                },
                "--collective_timeout_s must be above 0 and at most 1000000, "
                "got inf"},
        BadFlag{"hung_rank_timeout_of_years",
                [] { absl::SetFlag(&FLAGS_hung_rank_timeout_s, 1e16); },
                "--hung_rank_timeout_s must be above 0 and at most 1000000, "
                "got 1e+16"}),
    [](const ::testing::TestParamInfo<BadFlag>& info) {
      return std::string(info.param.name);
    });

}  // namespace
}  // namespace ditserve::engine
