#ifndef DITSERVE_CORE_SCHEDULERS_BETAS_H_
#define DITSERVE_CORE_SCHEDULERS_BETAS_H_

// The discrete noise schedule of DDPM-family schedulers (DDIM, DPM-Solver).

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ditserve::schedulers {

struct BetaSchedule {
  int64_t num_train_timesteps = 1000;
  double beta_start = 0.0001;
  double beta_end = 0.02;
  // "linear", "scaled_linear" or "squaredcos_cap_v2".
  std::string beta_schedule = "linear";
  // Overrides the above when set.
  std::optional<std::vector<double>> trained_betas;
};

class ConfigReader;

// Reads the beta fields of a scheduler config into `reader`'s schedule.
BetaSchedule ReadBetaSchedule(ConfigReader& reader);

// cumprod(1 - betas) in float32, computed exactly as diffusers does.
at::Tensor AlphasCumprod(const BetaSchedule& schedule);

}  // namespace ditserve::schedulers

#endif  // DITSERVE_CORE_SCHEDULERS_BETAS_H_
