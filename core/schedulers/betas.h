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

// Reads the beta fields of a scheduler config; absent keys keep `defaults`
// (the scheduler class's own defaults). rescale_betas_zero_snr is left to the
// caller: each scheduler class rescales differently, if at all.
BetaSchedule ReadBetaSchedule(ConfigReader& reader,
                              const BetaSchedule& defaults = {});

// cumprod(1 - betas), computed exactly as diffusers does: in float32, except
// that scaled_linear betas are built in `scaled_linear_dtype` (the CogVideoX
// schedulers build them in float64, and so get float64 alphas).
at::Tensor AlphasCumprod(const BetaSchedule& schedule,
                         at::ScalarType scaled_linear_dtype = at::kFloat);

}  // namespace ditserve::schedulers

#endif  // DITSERVE_CORE_SCHEDULERS_BETAS_H_
