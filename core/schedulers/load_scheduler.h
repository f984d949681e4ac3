#ifndef DITSERVE_CORE_SCHEDULERS_LOAD_SCHEDULER_H_
#define DITSERVE_CORE_SCHEDULERS_LOAD_SCHEDULER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/schedulers/flow_match_euler.h"
#include "core/schedulers/scheduler.h"
#include "nlohmann/json.hpp"

namespace ditserve::schedulers {

// Builds the scheduler a config names in "_class_name"
// (FlowMatchEulerDiscreteScheduler, DPMSolverMultistepScheduler,
// DDIMScheduler). `source` names the config in errors.
absl::StatusOr<std::unique_ptr<Scheduler>> MakeScheduler(
    const nlohmann::json& config, const std::string& source);

// The config of the FlowMatchEulerDiscreteScheduler a checkpoint of a family
// that runs no other (FLUX, SD3) names; INVALID_ARGUMENT naming the class
// when `config` names another.
absl::StatusOr<FlowMatchEulerConfig> LoadFlowMatchEulerConfig(
    const nlohmann::json& config, const std::string& source);

// MakeScheduler of a checkpoint's scheduler/ folder or a
// scheduler_config.json file.
absl::StatusOr<std::unique_ptr<Scheduler>> LoadScheduler(
    const std::string& path_or_dir);

}  // namespace ditserve::schedulers

#endif  // DITSERVE_CORE_SCHEDULERS_LOAD_SCHEDULER_H_
