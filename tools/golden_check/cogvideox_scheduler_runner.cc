// Golden cases of diffusers' CogVideoXDDIMScheduler and CogVideoXDPMScheduler:
// every schedule (timesteps, alphas_cumprod, final_alpha_cumprod) and every
// step chain of case.json, each step fed with this implementation's own
// previous sample. DPM chains run on a CPU generator seeded with the chain's
// noise_seed, as the case was made; a second generator with the same seed
// replays the chain's draws_per_step, so every stored draw (noise.i,
// noise_discarded.i) is checked against LibTorch's stream and the generator
// state after every step shows that the scheduler drew exactly that often.

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/families/cogvideox/cogvideox_ddim_scheduler.h"
#include "core/families/cogvideox/cogvideox_dpm_scheduler.h"
#include "core/families/cogvideox/cogvideox_schedule.h"
#include "core/schedulers/scheduler_config.h"
#include "tools/golden_check/runners.h"

namespace ditserve::golden {
namespace {

using families::CogVideoXSchedulerBase;

// README "Tolerances": the CogVideoX alphas_cumprod (float64) within 1e-12,
// for a case.json that names no "alphas_cumprod" tolerance.
constexpr Tolerance kAlphasCumprodTolerance{.atol = 1e-12, .rtol = 1e-12};
// Draws from the same seeded generator must be the same numbers.
constexpr Tolerance kExact{.atol = 0.0, .rtol = 0.0};

struct CaseTolerances {
  Tolerance timesteps;
  Tolerance alphas_cumprod;
};

absl::StatusOr<CaseTolerances> ReadCaseTolerances(
    const GoldenCase& golden_case) {
  const nlohmann::json tolerance =
      golden_case.spec.value("tolerance", nlohmann::json::object());
  if (!tolerance.contains("timesteps_int")) {
    return absl::InvalidArgumentError(absl::StrCat(
        golden_case.dir, "/case.json has no tolerance \"timesteps_int\""));
  }
  CaseTolerances tolerances{.alphas_cumprod = kAlphasCumprodTolerance};
  ASSIGN_OR_RETURN(tolerances.timesteps,
                   ParseTolerance(tolerance["timesteps_int"]));
  if (tolerance.contains("alphas_cumprod")) {
    ASSIGN_OR_RETURN(tolerances.alphas_cumprod,
                     ParseTolerance(tolerance["alphas_cumprod"]));
  }
  return tolerances;
}

class CogVideoXSchedulerCaseRunner {
 public:
  CogVideoXSchedulerCaseRunner(
      const GoldenCase& golden_case,
      std::unique_ptr<CogVideoXSchedulerBase> scheduler,
      CaseTolerances tolerances, bool draws_noise)
      : case_(golden_case),
        scheduler_(std::move(scheduler)),
        tolerances_(tolerances),
        draws_noise_(draws_noise) {}

  absl::Status CheckSchedules() {
    ASSIGN_OR_RETURN(
        io::TensorMap stored,
        case_.ReadTensors("schedule_file", "schedule.safetensors"));
    const nlohmann::json& schedules = case_.spec.at("schedule");
    for (const auto& [key, entry] : schedules.items()) {
      RETURN_IF_ERROR(scheduler_->SetTimesteps(std::stoi(key)));
      ASSIGN_OR_RETURN(at::Tensor timesteps,
                       RequireTensor(case_, stored, "timesteps." + key));
      Compare("timesteps." + key, scheduler_->timesteps(), timesteps,
              tolerances_.timesteps);
    }
    ASSIGN_OR_RETURN(at::Tensor alphas_cumprod,
                     RequireTensor(case_, stored, "alphas_cumprod"));
    Compare("alphas_cumprod", scheduler_->alphas_cumprod(), alphas_cumprod,
            tolerances_.alphas_cumprod);
    ASSIGN_OR_RETURN(at::Tensor final_alpha,
                     RequireTensor(case_, stored, "final_alpha_cumprod"));
    Compare("final_alpha_cumprod",
            scheduler_->final_alpha_cumprod().reshape({1}), final_alpha,
            tolerances_.alphas_cumprod);
    return absl::OkStatus();
  }

  absl::Status CheckChains() {
    ASSIGN_OR_RETURN(
        io::TensorMap inputs,
        case_.ReadTensors("steps_inputs_file", "steps_inputs.safetensors"));
    ASSIGN_OR_RETURN(
        io::TensorMap outputs,
        case_.ReadTensors("steps_outputs_file", "steps_outputs.safetensors"));
    for (const nlohmann::json& chain : case_.spec.at("chains")) {
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
    const std::string name = chain.at("chain").get<std::string>();
    ASSIGN_OR_RETURN(Tolerance tolerance,
                     ParseTolerance(chain.at("tolerance")));
    RETURN_IF_ERROR(scheduler_->SetTimesteps(
        chain.at("set_timesteps").at("num_inference_steps").get<int>()));
    if (outputs.count(name + ".timesteps") > 0) {
      Compare(name + ".timesteps", scheduler_->timesteps(),
              outputs.at(name + ".timesteps"), tolerances_.timesteps);
    }
    schedulers::StepOptions options;
    options.eta =
        chain.value("step_kwargs", nlohmann::json::object()).value("eta", 0.0);
    std::vector<int> draws_per_step;
    at::Generator replay;
    if (draws_noise_) {
      const uint64_t seed = chain.at("noise_seed").get<uint64_t>();
      options.generators = {at::make_generator<at::CPUGeneratorImpl>(seed)};
      replay = at::make_generator<at::CPUGeneratorImpl>(seed);
      draws_per_step = chain.at("draws_per_step").get<std::vector<int>>();
      if (static_cast<int>(draws_per_step.size()) != scheduler_->num_steps()) {
        return absl::InvalidArgumentError(absl::StrCat(
            case_.dir, ": chain ", name, " lists ", draws_per_step.size(),
            " draws_per_step for ", scheduler_->num_steps(), " steps"));
      }
    }
    ASSIGN_OR_RETURN(at::Tensor current,
                     RequireTensor(case_, inputs, name + ".sample_init"));
    for (int i = 0; i < scheduler_->num_steps(); ++i) {
      const std::string step = absl::StrCat(".", i);
      ASSIGN_OR_RETURN(
          at::Tensor model_output,
          RequireTensor(case_, inputs, name + ".model_output" + step));
      ASSIGN_OR_RETURN(schedulers::StepOutput out,
                       scheduler_->Step(model_output, current, options));
      ASSIGN_OR_RETURN(
          at::Tensor prev,
          RequireTensor(case_, outputs, name + ".prev_sample" + step));
      ASSIGN_OR_RETURN(
          at::Tensor x0,
          RequireTensor(case_, outputs, name + ".pred_original_sample" + step));
      Compare(name + ".prev_sample" + step, out.prev_sample, prev, tolerance);
      Compare(name + ".pred_original_sample" + step, out.pred_original_sample,
              x0, tolerance);
      if (draws_noise_) {
        RETURN_IF_ERROR(CheckDraws(name, i, draws_per_step[i], current, inputs,
                                   replay, options.generators[0]));
      }
      current = out.prev_sample;
    }
    return absl::OkStatus();
  }

  // Replays step `i`'s draws and compares them with the stored ones; the
  // first of two is the discarded one.
  absl::Status CheckDraws(const std::string& chain, int i, int draws,
                          const at::Tensor& sample, const io::TensorMap& inputs,
                          at::Generator& replay,
                          const at::Generator& scheduler_generator) {
    if (draws != 1 && draws != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(case_.dir, ": chain ", chain, " step ", i, " lists ",
                       draws, " draws; expected 1 or 2"));
    }
    const std::string step = absl::StrCat(".", i);
    std::vector<std::string> names;
    if (draws == 2) names.push_back(chain + ".noise_discarded" + step);
    names.push_back(chain + ".noise" + step);
    for (const std::string& name : names) {
      ASSIGN_OR_RETURN(at::Tensor stored, RequireTensor(case_, inputs, name));
      Compare(name, at::randn(sample.sizes(), replay, sample.options()), stored,
              kExact);
    }
    Compare(chain + ".generator_state" + step, scheduler_generator.get_state(),
            replay.get_state(), kExact);
    return absl::OkStatus();
  }

  void Compare(const std::string& name, const at::Tensor& actual,
               const at::Tensor& expected, const Tolerance& tolerance) {
    comparisons_.push_back(CompareOutput(name, actual, expected, tolerance));
  }

  const GoldenCase& case_;
  std::unique_ptr<CogVideoXSchedulerBase> scheduler_;
  CaseTolerances tolerances_;
  bool draws_noise_;
  std::vector<OutputComparison> comparisons_;
};

absl::StatusOr<std::vector<OutputComparison>> RunCase(
    const GoldenCase& golden_case, bool dpm) {
  const std::string config_path = golden_case.Path(
      golden_case.spec.value("config_file", "scheduler_config.json"));
  ASSIGN_OR_RETURN(nlohmann::json json,
                   schedulers::ReadSchedulerConfig(config_path));
  ASSIGN_OR_RETURN(families::CogVideoXSchedulerConfig config,
                   families::ParseCogVideoXSchedulerConfig(json, config_path));
  ASSIGN_OR_RETURN(CaseTolerances tolerances, ReadCaseTolerances(golden_case));
  std::unique_ptr<CogVideoXSchedulerBase> scheduler;
  if (dpm) {
    scheduler = std::make_unique<families::CogVideoXDPMScheduler>(config);
  } else {
    scheduler = std::make_unique<families::CogVideoXDDIMScheduler>(config);
  }
  CogVideoXSchedulerCaseRunner runner(golden_case, std::move(scheduler),
                                      tolerances, dpm);
  try {
    RETURN_IF_ERROR(runner.CheckSchedules());
    RETURN_IF_ERROR(runner.CheckChains());
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        golden_case.dir, "/case.json has an unexpected field: ", e.what()));
  }
  return runner.TakeComparisons();
}

}  // namespace

absl::StatusOr<std::vector<OutputComparison>> RunCogVideoXDDIMSchedulerCase(
    const GoldenCase& golden_case) {
  return RunCase(golden_case, /*dpm=*/false);
}

absl::StatusOr<std::vector<OutputComparison>> RunCogVideoXDPMSchedulerCase(
    const GoldenCase& golden_case) {
  return RunCase(golden_case, /*dpm=*/true);
}

}  // namespace ditserve::golden
