#include "core/schedulers/load_scheduler.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/schedulers/ddim.h"
#include "core/schedulers/dpm_solver_multistep.h"
#include "core/schedulers/flow_match_euler.h"
#include "core/schedulers/scheduler_config.h"

namespace ditserve::schedulers {
namespace {

constexpr char kFlowMatchEuler[] = "FlowMatchEulerDiscreteScheduler";

absl::StatusOr<std::string> ClassName(const nlohmann::json& config,
                                      const std::string& source) {
  auto class_it = config.find("_class_name");
  if (!config.is_object() || class_it == config.end() ||
      !class_it->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, " has no \"_class_name\" string"));
  }
  return class_it->get<std::string>();
}

}  // namespace

absl::StatusOr<FlowMatchEulerConfig> LoadFlowMatchEulerConfig(
    const nlohmann::json& config, const std::string& source) {
  ASSIGN_OR_RETURN(const std::string name, ClassName(config, source));
  if (name != kFlowMatchEuler) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": scheduler class \"", name,
        "\" is not supported for this model (expected ", kFlowMatchEuler, ")"));
  }
  return ParseFlowMatchEulerConfig(config, source);
}

absl::StatusOr<std::unique_ptr<Scheduler>> MakeScheduler(
    const nlohmann::json& config, const std::string& source) {
  ASSIGN_OR_RETURN(const std::string name, ClassName(config, source));
  if (name == kFlowMatchEuler) {
    ASSIGN_OR_RETURN(FlowMatchEulerConfig parsed,
                     ParseFlowMatchEulerConfig(config, source));
    return std::make_unique<FlowMatchEulerDiscreteScheduler>(std::move(parsed));
  }
  if (name == "DPMSolverMultistepScheduler") {
    ASSIGN_OR_RETURN(DpmSolverMultistepConfig parsed,
                     ParseDpmSolverMultistepConfig(config, source));
    return std::make_unique<DPMSolverMultistepScheduler>(std::move(parsed));
  }
  if (name == "DDIMScheduler") {
    ASSIGN_OR_RETURN(DdimConfig parsed, ParseDdimConfig(config, source));
    return std::make_unique<DDIMScheduler>(std::move(parsed));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      source, ": scheduler class \"", name,
      "\" is not supported (expected FlowMatchEulerDiscreteScheduler, "
      "DPMSolverMultistepScheduler or DDIMScheduler)"));
}

absl::StatusOr<std::unique_ptr<Scheduler>> LoadScheduler(
    const std::string& path_or_dir) {
  ASSIGN_OR_RETURN(nlohmann::json config, ReadSchedulerConfig(path_or_dir));
  return MakeScheduler(config, path_or_dir);
}

}  // namespace ditserve::schedulers
