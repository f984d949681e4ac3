#ifndef DITSERVE_TESTS_UNIT_MODELS_GOLDEN_CASE_H_
#define DITSERVE_TESTS_UNIT_MODELS_GOLDEN_CASE_H_

// Golden cases copied from shared/golden into tests/data/golden: inputs,
// reference outputs and the per-output tolerances of case.json.

#include <ATen/core/Tensor.h>
#include <gtest/gtest.h>

#include <string>

#include "core/io/safetensors.h"
#include "nlohmann/json.hpp"

namespace ditserve::testing {

struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
};

class GoldenCase {
 public:
  // `relative_dir` under tests/data/golden, e.g. "models/flux_dev". Fails the
  // current test (and leaves the case empty) when the folder is unreadable.
  explicit GoldenCase(const std::string& relative_dir);

  const std::string& dir() const { return dir_; }
  const nlohmann::json& json() const { return json_; }
  // Missing names fail the current test and return an undefined tensor.
  at::Tensor Input(const std::string& name) const;
  at::Tensor Output(const std::string& name) const;
  Tolerance ToleranceFor(const std::string& output) const;
  // Expects `actual`, `output` computed in bfloat16, within twice
  // diffusers' own bfloat16 error on this case of the float32 reference
  // (tests/data/bfloat16_tolerances.json, written by
  // bench/compare_diffusers/bfloat16_error), and prints both errors.
  void ExpectBfloat16Close(const at::Tensor& actual,
                           const std::string& output) const;

 private:
  std::string dir_;
  nlohmann::json json_;
  io::TensorMap inputs_;
  io::TensorMap outputs_;
};

// `tensor` in `dtype` when it is floating point (a model's inputs as a
// pipeline in that dtype passes them), else unchanged.
at::Tensor InDType(const at::Tensor& tensor, c10::ScalarType dtype);

// The golden rule: every element satisfies |actual - expected| <= atol +
// rtol * |expected|; the message gives the worst element and the max error.
::testing::AssertionResult AllClose(const at::Tensor& actual,
                                    const at::Tensor& expected,
                                    const Tolerance& tolerance);

// uint8 images: every value within atol and at most max_fraction_differing
// of them differ at all.
::testing::AssertionResult Uint8Close(const at::Tensor& actual,
                                      const at::Tensor& expected, int atol,
                                      double max_fraction_differing);

}  // namespace ditserve::testing

#endif  // DITSERVE_TESTS_UNIT_MODELS_GOLDEN_CASE_H_
