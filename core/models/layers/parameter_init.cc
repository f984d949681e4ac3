#include "core/models/layers/parameter_init.h"

#include <torch/torch.h>

#include <cmath>

namespace ditserve::models {
namespace {

thread_local int random_parameter_scopes = 0;

}  // namespace

RandomParameters::RandomParameters() { ++random_parameter_scopes; }

RandomParameters::~RandomParameters() { --random_parameter_scopes; }

bool RandomParameters::Active() { return random_parameter_scopes > 0; }

at::Tensor UnwrittenParameter(c10::IntArrayRef shape) {
  return torch::empty(shape);
}

void DrawWeightAndBias(at::Tensor& weight, at::Tensor& bias) {
  if (!RandomParameters::Active()) return;
  torch::NoGradGuard no_grad;
  torch::nn::init::kaiming_uniform_(weight, /*a=*/std::sqrt(5.0));
  if (!bias.defined()) return;
  const int64_t fan_in =
      std::get<0>(torch::nn::init::_calculate_fan_in_and_fan_out(weight));
  const double bound = 1 / std::sqrt(fan_in);
  torch::nn::init::uniform_(bias, -bound, bound);
}

void DrawEmbedding(at::Tensor& weight) {
  if (!RandomParameters::Active()) return;
  torch::NoGradGuard no_grad;
  torch::nn::init::normal_(weight);
}

}  // namespace ditserve::models
