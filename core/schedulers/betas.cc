#include "core/schedulers/betas.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/schedulers/scheduler_config.h"

namespace ditserve::schedulers {
namespace {

// betas_for_alpha_bar with the cosine transform (Nichol & Dhariwal), each
// beta capped at 0.999; computed in Python floats, then cast to float32.
at::Tensor SquaredCosineBetas(int64_t num_train_timesteps) {
  auto alpha_bar = [](double t) {
    const double c = std::cos((t + 0.008) / 1.008 * M_PI / 2.0);
    return c * c;
  };
  std::vector<double> betas;
  betas.reserve(num_train_timesteps);
  const double n = static_cast<double>(num_train_timesteps);
  for (int64_t i = 0; i < num_train_timesteps; ++i) {
    const double t1 = static_cast<double>(i) / n;
    const double t2 = static_cast<double>(i + 1) / n;
    betas.push_back(std::min(1.0 - alpha_bar(t2) / alpha_bar(t1), 0.999));
  }
  return torch::tensor(betas, torch::kFloat64).to(torch::kFloat32);
}

at::Tensor Betas(const BetaSchedule& schedule,
                 at::ScalarType scaled_linear_dtype) {
  const int64_t n = schedule.num_train_timesteps;
  if (schedule.trained_betas.has_value()) {
    return torch::tensor(*schedule.trained_betas, torch::kFloat64)
        .to(torch::kFloat32);
  }
  if (schedule.beta_schedule == "linear") {
    return torch::linspace(schedule.beta_start, schedule.beta_end, n,
                           torch::kFloat32);
  }
  if (schedule.beta_schedule == "scaled_linear") {
    return torch::linspace(std::sqrt(schedule.beta_start),
                           std::sqrt(schedule.beta_end), n,
                           torch::TensorOptions().dtype(scaled_linear_dtype))
        .pow(2);
  }
  return SquaredCosineBetas(n);
}

}  // namespace

BetaSchedule ReadBetaSchedule(ConfigReader& reader,
                              const BetaSchedule& defaults) {
  BetaSchedule schedule = defaults;
  schedule.num_train_timesteps =
      reader.Int("num_train_timesteps", schedule.num_train_timesteps);
  schedule.beta_start = reader.Number("beta_start", schedule.beta_start);
  schedule.beta_end = reader.Number("beta_end", schedule.beta_end);
  schedule.beta_schedule =
      reader.Choice("beta_schedule", schedule.beta_schedule,
                    {"linear", "scaled_linear", "squaredcos_cap_v2"});
  schedule.trained_betas = reader.OptionalNumberList("trained_betas");
  if (schedule.num_train_timesteps < 2) {
    reader.Fail("num_train_timesteps",
                absl::StrCat("is ", schedule.num_train_timesteps,
                             "; expected at least 2"));
  }
  if (schedule.trained_betas.has_value() &&
      static_cast<int64_t>(schedule.trained_betas->size()) !=
          schedule.num_train_timesteps) {
    reader.Fail("trained_betas",
                absl::StrCat("has ", schedule.trained_betas->size(),
                             " entries; expected num_train_timesteps = ",
                             schedule.num_train_timesteps));
  }
  return schedule;
}

at::Tensor AlphasCumprod(const BetaSchedule& schedule,
                         at::ScalarType scaled_linear_dtype) {
  return torch::cumprod(1.0 - Betas(schedule, scaled_linear_dtype), 0);
}

}  // namespace ditserve::schedulers
