#include "core/schedulers/load_scheduler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace ditserve::schedulers {
namespace {

using ::testing::HasSubstr;

const std::string kGolden =
    std::string(DITSERVE_TEST_DATA_DIR) + "/golden/schedulers/";

TEST(LoadSchedulerTest, BuildsTheClassTheConfigNames) {
  for (const auto& [folder, name] :
       {std::pair{"flow_euler_flux", "FlowMatchEulerDiscreteScheduler"},
        std::pair{"dpm_pixart", "DPMSolverMultistepScheduler"},
        std::pair{"ddim_leading", "DDIMScheduler"}}) {
    auto scheduler = LoadScheduler(kGolden + folder);
    ASSERT_TRUE(scheduler.ok()) << scheduler.status();
    EXPECT_EQ((*scheduler)->class_name(), name);
  }
}

TEST(LoadSchedulerTest, AcceptsTheConfigFileItself) {
  auto scheduler =
      LoadScheduler(kGolden + "flow_euler_sd3/scheduler_config.json");
  ASSERT_TRUE(scheduler.ok()) << scheduler.status();
  ASSERT_TRUE((*scheduler)->SetTimesteps(28).ok());
  EXPECT_EQ((*scheduler)->num_steps(), 28);
}

TEST(LoadSchedulerTest, UnknownClassIsAnErrorNamingIt) {
  auto scheduler = MakeScheduler(
      nlohmann::json{{"_class_name", "EulerAncestralDiscreteScheduler"}},
      "scheduler/scheduler_config.json");
  EXPECT_EQ(scheduler.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(scheduler.status().message(),
              HasSubstr("EulerAncestralDiscreteScheduler"));
}

TEST(LoadSchedulerTest, MissingClassNameIsAnError) {
  EXPECT_EQ(MakeScheduler(nlohmann::json::object(), "x").status().code(),
            absl::StatusCode::kInvalidArgument);
}

// FLUX and SD3 run only flow-matching Euler; a checkpoint naming another
// scheduler must not run as Euler.
TEST(LoadSchedulerTest, FlowMatchEulerConfigOfAnotherClassIsAnError) {
  const absl::StatusOr<FlowMatchEulerConfig> heun = LoadFlowMatchEulerConfig(
      nlohmann::json{{"_class_name", "FlowMatchHeunDiscreteScheduler"},
                     {"shift", 3.0}},
      "scheduler/scheduler_config.json");
  EXPECT_EQ(heun.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(heun.status().message(),
            "scheduler/scheduler_config.json: scheduler class "
            "\"FlowMatchHeunDiscreteScheduler\" is not supported for this "
            "model (expected FlowMatchEulerDiscreteScheduler)");
  const absl::StatusOr<FlowMatchEulerConfig> euler = LoadFlowMatchEulerConfig(
      nlohmann::json{{"_class_name", "FlowMatchEulerDiscreteScheduler"},
                     {"shift", 3.0}},
      "scheduler/scheduler_config.json");
  ASSERT_TRUE(euler.ok()) << euler.status();
  EXPECT_EQ(euler->shift, 3.0);
}

TEST(LoadSchedulerTest, MissingFolderIsNotFound) {
  EXPECT_EQ(LoadScheduler(kGolden + "no_such_scheduler").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace ditserve::schedulers
