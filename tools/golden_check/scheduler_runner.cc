// Golden cases of the diffusers schedulers: every schedule (timesteps,
// sigmas, mu, alphas_cumprod) and every step chain of case.json, each step
// fed with this implementation's own previous sample as diffusers' loop is.

#include <torch/torch.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/schedulers/ddim.h"
#include "core/schedulers/dpm_solver_multistep.h"
#include "core/schedulers/flow_match_euler.h"
#include "core/schedulers/load_scheduler.h"
#include "core/schedulers/numpy_compat.h"
#include "core/schedulers/scheduler_config.h"
#include "tools/golden_check/runners.h"

namespace ditserve::golden {
namespace {

using schedulers::Scheduler;

struct ScheduleTolerances {
  Tolerance timesteps_int;
  Tolerance timesteps_float;
  Tolerance sigmas_and_mu;
};

absl::StatusOr<ScheduleTolerances> ReadScheduleTolerances(
    const GoldenCase& golden_case) {
  auto json = golden_case.spec.find("tolerance");
  if (json == golden_case.spec.end() || !json->is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(golden_case.dir, "/case.json has no \"tolerance\""));
  }
  ScheduleTolerances tolerances;
  for (auto [key, target] :
       {std::pair{"timesteps_int", &tolerances.timesteps_int},
        std::pair{"timesteps_float", &tolerances.timesteps_float},
        std::pair{"sigmas_and_mu", &tolerances.sigmas_and_mu}}) {
    auto entry = json->find(key);
    if (entry == json->end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          golden_case.dir, "/case.json has no tolerance \"", key, "\""));
    }
    ASSIGN_OR_RETURN(Tolerance tolerance, ParseTolerance(*entry));
    *target = tolerance;
  }
  return tolerances;
}

at::Tensor SigmasOf(const Scheduler& scheduler) {
  if (auto* flow =
          dynamic_cast<const schedulers::FlowMatchEulerDiscreteScheduler*>(
              &scheduler)) {
    return flow->sigmas();
  }
  if (auto* dpm = dynamic_cast<const schedulers::DPMSolverMultistepScheduler*>(
          &scheduler)) {
    return dpm->sigmas();
  }
  return at::Tensor();
}

at::Tensor AlphasCumprodOf(const Scheduler& scheduler) {
  if (auto* dpm = dynamic_cast<const schedulers::DPMSolverMultistepScheduler*>(
          &scheduler)) {
    return dpm->alphas_cumprod();
  }
  if (auto* ddim = dynamic_cast<const schedulers::DDIMScheduler*>(&scheduler)) {
    return ddim->alphas_cumprod();
  }
  return at::Tensor();
}

class SchedulerCaseRunner {
 public:
  SchedulerCaseRunner(const GoldenCase& golden_case,
                      std::unique_ptr<Scheduler> scheduler,
                      ScheduleTolerances tolerances)
      : case_(golden_case),
        scheduler_(std::move(scheduler)),
        tolerances_(tolerances) {}

  absl::Status CheckSchedules() {
    ASSIGN_OR_RETURN(
        io::TensorMap stored,
        case_.ReadTensors("schedule_file", "schedule.safetensors"));
    auto schedules = case_.spec.find("schedule");
    if (schedules == case_.spec.end() || !schedules->is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(case_.dir, "/case.json has no \"schedule\""));
    }
    for (const auto& [key, entry] : schedules->items()) {
      const int steps = entry.contains("num_inference_steps")
                            ? entry["num_inference_steps"].get<int>()
                            : std::stoi(key);
      schedulers::TimestepOptions options;
      if (entry.contains("image_seq_len")) {
        // The FLUX pipeline's convention: linspace sigmas and mu from the
        // image token count.
        auto* flow = dynamic_cast<schedulers::FlowMatchEulerDiscreteScheduler*>(
            scheduler_.get());
        if (flow == nullptr) {
          return absl::InvalidArgumentError(absl::StrCat(
              case_.dir, ": schedule \"", key,
              "\" has an image_seq_len but the scheduler is not flow "
              "matching"));
        }
        const int64_t seq_len = entry["image_seq_len"].get<int64_t>();
        options.sigmas = schedulers::Linspace(1.0, 1.0 / steps, steps);
        options.mu = schedulers::CalculateShift(seq_len, flow->config());
        const std::string mu_name = absl::StrCat("mu.seq", seq_len);
        if (stored.count(mu_name) > 0) {
          Compare(mu_name, torch::tensor({*options.mu}, torch::kFloat64),
                  stored.at(mu_name), tolerances_.sigmas_and_mu);
        }
      }
      RETURN_IF_ERROR(scheduler_->SetTimesteps(steps, options));
      ASSIGN_OR_RETURN(at::Tensor timesteps,
                       RequireTensor(case_, stored, "timesteps." + key));
      Compare("timesteps." + key, scheduler_->timesteps(), timesteps,
              timesteps.is_floating_point() ? tolerances_.timesteps_float
                                            : tolerances_.timesteps_int);
      if (stored.count("sigmas." + key) > 0) {
        Compare("sigmas." + key, SigmasOf(*scheduler_),
                stored.at("sigmas." + key), tolerances_.sigmas_and_mu);
      }
    }
    if (stored.count("alphas_cumprod") > 0) {
      Compare("alphas_cumprod", AlphasCumprodOf(*scheduler_),
              stored.at("alphas_cumprod"), tolerances_.sigmas_and_mu);
    }
    return absl::OkStatus();
  }

  absl::Status CheckChains() {
    auto chains = case_.spec.find("chains");
    if (chains == case_.spec.end()) return absl::OkStatus();
    ASSIGN_OR_RETURN(
        io::TensorMap inputs,
        case_.ReadTensors("steps_inputs_file", "steps_inputs.safetensors"));
    ASSIGN_OR_RETURN(
        io::TensorMap outputs,
        case_.ReadTensors("steps_outputs_file", "steps_outputs.safetensors"));
    for (const nlohmann::json& chain : *chains) {
      RETURN_IF_ERROR(CheckChain(chain, inputs, outputs));
    }
    return absl::OkStatus();
  }

  std::vector<OutputComparison> TakeComparisons() {
    return std::move(comparisons_);
  }

 private:
  absl::Status CheckChain(const nlohmann::json& chain,
                          const io::TensorMap& inputs,
                          const io::TensorMap& outputs) {
    const std::string name = chain.value("chain", "");
    ASSIGN_OR_RETURN(Tolerance tolerance, ParseTolerance(chain.value(
                                              "tolerance", nlohmann::json())));
    const nlohmann::json args = chain.value("set_timesteps", nlohmann::json());
    schedulers::TimestepOptions options;
    if (args.contains("sigmas")) {
      options.sigmas = args["sigmas"].get<std::vector<double>>();
    }
    if (args.contains("mu")) options.mu = args["mu"].get<double>();
    const int steps = args.contains("num_inference_steps")
                          ? args["num_inference_steps"].get<int>()
                          : static_cast<int>(options.sigmas.size());
    schedulers::StepOptions step_options;
    step_options.eta =
        chain.value("step_kwargs", nlohmann::json::object()).value("eta", 0.0);

    RETURN_IF_ERROR(scheduler_->SetTimesteps(steps, options));
    if (outputs.count(name + ".timesteps") > 0) {
      Compare(name + ".timesteps", scheduler_->timesteps(),
              outputs.at(name + ".timesteps"), tolerances_.timesteps_int);
    }
    ASSIGN_OR_RETURN(at::Tensor sample,
                     RequireTensor(case_, inputs, name + ".sample_init"));
    at::Tensor current = sample;
    for (int i = 0; i < scheduler_->num_steps(); ++i) {
      const std::string step = absl::StrCat(".", i);
      ASSIGN_OR_RETURN(
          at::Tensor model_output,
          RequireTensor(case_, inputs, name + ".model_output" + step));
      auto noise = inputs.find(name + ".variance_noise" + step);
      step_options.variance_noise =
          noise == inputs.end() ? at::Tensor() : noise->second;
      ASSIGN_OR_RETURN(schedulers::StepOutput out,
                       scheduler_->Step(model_output, current, step_options));
      ASSIGN_OR_RETURN(
          at::Tensor prev,
          RequireTensor(case_, outputs, name + ".prev_sample" + step));
      Compare(name + ".prev_sample" + step, out.prev_sample, prev, tolerance);
      auto x0 = outputs.find(name + ".pred_original_sample" + step);
      if (x0 != outputs.end()) {
        Compare(x0->first, out.pred_original_sample, x0->second, tolerance);
      }
      current = out.prev_sample;
    }
    return absl::OkStatus();
  }

  void Compare(const std::string& name, const at::Tensor& actual,
               const at::Tensor& expected, const Tolerance& tolerance) {
    comparisons_.push_back(CompareOutput(name, actual, expected, tolerance));
  }

  const GoldenCase& case_;
  std::unique_ptr<Scheduler> scheduler_;
  ScheduleTolerances tolerances_;
  std::vector<OutputComparison> comparisons_;
};

}  // namespace

absl::StatusOr<std::vector<OutputComparison>> RunSchedulerCase(
    const GoldenCase& golden_case) {
  const std::string config_path = golden_case.Path(
      golden_case.spec.value("config_file", "scheduler_config.json"));
  ASSIGN_OR_RETURN(nlohmann::json config,
                   schedulers::ReadSchedulerConfig(config_path));
  ASSIGN_OR_RETURN(std::unique_ptr<Scheduler> scheduler,
                   schedulers::MakeScheduler(config, config_path));
  ASSIGN_OR_RETURN(ScheduleTolerances tolerances,
                   ReadScheduleTolerances(golden_case));

  SchedulerCaseRunner runner(golden_case, std::move(scheduler), tolerances);
  try {
    RETURN_IF_ERROR(runner.CheckSchedules());
    RETURN_IF_ERROR(runner.CheckChains());
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        golden_case.dir, "/case.json has an unexpected field: ", e.what()));
  }
  return runner.TakeComparisons();
}

}  // namespace ditserve::golden
