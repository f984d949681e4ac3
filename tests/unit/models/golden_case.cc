#include "tests/unit/models/golden_case.h"

#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <iostream>

namespace ditserve::testing {
namespace {

at::Tensor Find(const io::TensorMap& tensors, const std::string& name,
                const std::string& dir) {
  const auto it = tensors.find(name);
  if (it == tensors.end()) {
    ADD_FAILURE() << dir << " has no tensor " << name;
    return at::Tensor();
  }
  return it->second;
}

}  // namespace

GoldenCase::GoldenCase(const std::string& relative_dir)
    : dir_(std::string(DITSERVE_TEST_DATA_DIR) + "/golden/" + relative_dir) {
  std::ifstream in(dir_ + "/case.json");
  if (!in) {
    ADD_FAILURE() << "missing golden case " << dir_;
    return;
  }
  json_ = nlohmann::json::parse(in);
  absl::StatusOr<io::TensorMap> inputs =
      io::ReadAllTensors(dir_ + "/inputs.safetensors");
  absl::StatusOr<io::TensorMap> outputs =
      io::ReadAllTensors(dir_ + "/outputs.safetensors");
  if (!inputs.ok() || !outputs.ok()) {
    ADD_FAILURE() << inputs.status() << "; " << outputs.status();
    return;
  }
  inputs_ = *std::move(inputs);
  outputs_ = *std::move(outputs);
}

at::Tensor GoldenCase::Input(const std::string& name) const {
  return Find(inputs_, name, dir_);
}

at::Tensor GoldenCase::Output(const std::string& name) const {
  return Find(outputs_, name, dir_);
}

Tolerance GoldenCase::ToleranceFor(const std::string& output) const {
  const nlohmann::json& entry = json_.at("tolerance").at(output);
  return {entry.at("atol").get<double>(), entry.at("rtol").get<double>()};
}

void GoldenCase::ExpectBfloat16Close(const at::Tensor& actual,
                                     const std::string& output) const {
  const std::string path =
      std::string(DITSERVE_TEST_DATA_DIR) + "/bfloat16_tolerances.json";
  std::ifstream in(path);
  if (!in) {
    ADD_FAILURE() << "missing " << path;
    return;
  }
  const std::string name = std::filesystem::path(dir_).filename().string();
  const nlohmann::json entry =
      nlohmann::json::parse(in).at("cases").at(name).at(output);
  const Tolerance tolerance{entry.at("atol").get<double>(),
                            entry.at("rtol").get<double>()};
  EXPECT_EQ(actual.scalar_type(), at::kBFloat16);
  const at::Tensor expected = Output(output);
  EXPECT_TRUE(AllClose(actual, expected, tolerance));
  const double needed =
      ((actual.to(at::kDouble) - expected.to(at::kDouble)).abs() -
       tolerance.rtol * expected.to(at::kDouble).abs())
          .max()
          .item<double>();
  std::cout << "bfloat16 " << name << "/" << output << ": atol needed "
            << needed << ", diffusers' own "
            << entry.at("diffusers_atol_needed").get<double>() << ", allowed "
            << tolerance.atol << " (rtol " << tolerance.rtol << ")\n";
}

at::Tensor InDType(const at::Tensor& tensor, c10::ScalarType dtype) {
  return tensor.is_floating_point() ? tensor.to(dtype) : tensor;
}

::testing::AssertionResult AllClose(const at::Tensor& actual,
                                    const at::Tensor& expected,
                                    const Tolerance& tolerance) {
  if (!actual.defined() || !expected.defined()) {
    return ::testing::AssertionFailure() << "undefined tensor";
  }
  if (actual.sizes() != expected.sizes()) {
    return ::testing::AssertionFailure()
           << "shape " << actual.sizes() << " != expected " << expected.sizes();
  }
  const at::Tensor a = actual.to(at::kDouble).cpu();
  const at::Tensor e = expected.to(at::kDouble).cpu();
  const at::Tensor error = (a - e).abs();
  const at::Tensor excess = error - (tolerance.atol + tolerance.rtol * e.abs());
  const int64_t worst = excess.flatten().argmax().item<int64_t>();
  const double max_error = error.max().item<double>();
  if (excess.flatten()[worst].item<double>() <= 0.0 &&
      !error.isnan().any().item<bool>()) {
    return ::testing::AssertionSuccess() << "max abs error " << max_error;
  }
  return ::testing::AssertionFailure()
         << "element " << worst << ": " << a.flatten()[worst].item<double>()
         << " vs expected " << e.flatten()[worst].item<double>()
         << "; max abs error " << max_error << ", atol " << tolerance.atol
         << ", rtol " << tolerance.rtol;
}

::testing::AssertionResult Uint8Close(const at::Tensor& actual,
                                      const at::Tensor& expected, int atol,
                                      double max_fraction_differing) {
  if (actual.sizes() != expected.sizes() || actual.scalar_type() != at::kByte) {
    return ::testing::AssertionFailure()
           << "got " << actual.scalar_type() << " " << actual.sizes()
           << ", expected uint8 " << expected.sizes();
  }
  const at::Tensor difference =
      (actual.to(at::kInt) - expected.to(at::kInt)).abs();
  const int max_difference = difference.max().item<int>();
  const double fraction =
      difference.ne(0).to(at::kDouble).mean().item<double>();
  if (max_difference <= atol && fraction <= max_fraction_differing) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "max difference " << max_difference << " (allowed " << atol
         << "), fraction differing " << fraction << " (allowed "
         << max_fraction_differing << ")";
}

}  // namespace ditserve::testing
