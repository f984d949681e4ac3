#ifndef DITSERVE_TOOLS_GOLDEN_CHECK_TOLERANCE_CHECK_H_
#define DITSERVE_TOOLS_GOLDEN_CHECK_TOLERANCE_CHECK_H_

// The golden tolerance rule: an output passes iff every element satisfies
// |out - ref| <= atol + rtol * |ref|, or, with max_fraction_differing (uint8
// images), iff every element is within atol and at most that fraction of the
// elements differ at all.

#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/io/safetensors.h"
#include "nlohmann/json.hpp"
#include "tools/golden_check/golden_case.h"

namespace ditserve::golden {

struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
  std::optional<double> max_fraction_differing;
};

// {"atol": a, "rtol": r[, "max_fraction_differing": f]}.
absl::StatusOr<Tolerance> ParseTolerance(const nlohmann::json& json);

struct OutputComparison {
  std::string name;
  Tolerance tolerance;
  double max_abs_err = 0.0;
  // Over elements with a non-zero reference.
  double max_rel_err = 0.0;
  // max |out - ref| / (atol + rtol * |ref|); <= 1 passes (infinite when an
  // exact comparison differs).
  double worst_ratio = 0.0;
  bool pass = false;
  // Why it failed beyond the numbers (shape or dtype mismatch, missing).
  std::string problem;
};

// Compares in float64; shapes and dtypes must match exactly.
OutputComparison CompareOutput(const std::string& name,
                               const at::Tensor& actual,
                               const at::Tensor& expected,
                               const Tolerance& tolerance);

// Compares every output case.json lists under "outputs" with the reference in
// the case's outputs file, each with its "tolerance" entry. An output the
// runner did not produce is a failure; extra outputs of the runner are not
// compared.
absl::StatusOr<std::vector<OutputComparison>> CompareWithReferenceOutputs(
    const GoldenCase& golden_case, const io::TensorMap& actual);

}  // namespace ditserve::golden

#endif  // DITSERVE_TOOLS_GOLDEN_CHECK_TOLERANCE_CHECK_H_
