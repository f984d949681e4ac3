#include "tools/golden_check/tolerance_check.h"

#include <torch/torch.h>

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"

namespace ditserve::golden {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

absl::StatusOr<double> NonNegative(const nlohmann::json& json,
                                   const char* key) {
  auto it = json.find(key);
  if (it == json.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tolerance ", json.dump(), " has no \"", key, "\""));
  }
  absl::StatusOr<double> value = base::JsonNumber(*it);
  if (!value.ok() || !(*value >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("tolerance \"", key, "\" is ", it->dump(),
                     "; expected a non-negative number"));
  }
  return *value;
}

}  // namespace

absl::StatusOr<Tolerance> ParseTolerance(const nlohmann::json& json) {
  if (!json.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tolerance ", json.dump(), " is not an object"));
  }
  Tolerance tolerance;
  ASSIGN_OR_RETURN(double atol, NonNegative(json, "atol"));
  ASSIGN_OR_RETURN(double rtol, NonNegative(json, "rtol"));
  tolerance.atol = atol;
  tolerance.rtol = rtol;
  if (json.contains("max_fraction_differing")) {
    ASSIGN_OR_RETURN(tolerance.max_fraction_differing,
                     NonNegative(json, "max_fraction_differing"));
  }
  return tolerance;
}

OutputComparison CompareOutput(const std::string& name,
                               const at::Tensor& actual,
                               const at::Tensor& expected,
                               const Tolerance& tolerance) {
  OutputComparison result;
  result.name = name;
  result.tolerance = tolerance;
  if (!actual.defined()) {
    result.problem = "not produced";
    result.worst_ratio = kInfinity;
    return result;
  }
  if (actual.sizes() != expected.sizes()) {
    result.problem = absl::StrCat("shape ", c10::str(actual.sizes()),
                                  " differs from the reference ",
                                  c10::str(expected.sizes()));
    result.worst_ratio = kInfinity;
    return result;
  }
  if (actual.scalar_type() != expected.scalar_type()) {
    result.problem = absl::StrCat("dtype ", c10::toString(actual.scalar_type()),
                                  " differs from the reference ",
                                  c10::toString(expected.scalar_type()));
    result.worst_ratio = kInfinity;
    return result;
  }
  if (expected.numel() == 0) {
    result.pass = true;
    return result;
  }
  torch::NoGradGuard no_grad;
  const at::Tensor out = actual.detach().to(torch::kCPU, torch::kFloat64);
  const at::Tensor ref = expected.detach().to(torch::kCPU, torch::kFloat64);
  const at::Tensor diff = (out - ref).abs();
  if (diff.isnan().any().item<bool>()) {
    result.problem = "NaN where the reference has a number";
    result.max_abs_err = kInfinity;
    result.max_rel_err = kInfinity;
    result.worst_ratio = kInfinity;
    return result;
  }
  result.max_abs_err = diff.max().item<double>();
  const at::Tensor nonzero = ref != 0;
  if (nonzero.any().item<bool>()) {
    result.max_rel_err =
        (diff.masked_select(nonzero) / ref.abs().masked_select(nonzero))
            .max()
            .item<double>();
  }
  if (tolerance.max_fraction_differing.has_value()) {
    const double fraction =
        (diff > 0).to(torch::kFloat64).mean().item<double>();
    const double value_ratio = tolerance.atol > 0
                                   ? result.max_abs_err / tolerance.atol
                                   : (result.max_abs_err > 0 ? kInfinity : 0.0);
    const double limit = *tolerance.max_fraction_differing;
    const double fraction_ratio =
        limit > 0 ? fraction / limit : (fraction > 0 ? kInfinity : 0.0);
    result.worst_ratio = std::max(value_ratio, fraction_ratio);
    if (fraction > limit) {
      result.problem = absl::StrCat(fraction * 100, "% of the values differ");
    }
  } else {
    const at::Tensor bound = tolerance.atol + tolerance.rtol * ref.abs();
    const at::Tensor ratio =
        torch::where(bound > 0, diff / bound,
                     torch::where(diff > 0, torch::full_like(diff, kInfinity),
                                  torch::zeros_like(diff)));
    result.worst_ratio = ratio.max().item<double>();
  }
  result.pass = result.worst_ratio <= 1.0;
  return result;
}

absl::StatusOr<std::vector<OutputComparison>> CompareWithReferenceOutputs(
    const GoldenCase& golden_case, const io::TensorMap& actual) {
  ASSIGN_OR_RETURN(
      io::TensorMap expected,
      golden_case.ReadTensors("outputs_file", "outputs.safetensors"));
  auto outputs = golden_case.spec.find("outputs");
  auto tolerances = golden_case.spec.find("tolerance");
  if (outputs == golden_case.spec.end() || !outputs->is_object() ||
      tolerances == golden_case.spec.end() || !tolerances->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        golden_case.dir, "/case.json needs \"outputs\" and \"tolerance\""));
  }
  std::vector<OutputComparison> comparisons;
  for (const auto& [name, unused_spec] : outputs->items()) {
    auto reference = expected.find(name);
    if (reference == expected.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(golden_case.dir, ": output \"", name,
                       "\" is listed in case.json but not stored"));
    }
    auto tolerance_json = tolerances->find(name);
    if (tolerance_json == tolerances->end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          golden_case.dir, ": output \"", name, "\" has no tolerance"));
    }
    ASSIGN_OR_RETURN(Tolerance tolerance, ParseTolerance(*tolerance_json));
    auto produced = actual.find(name);
    comparisons.push_back(CompareOutput(
        name, produced == actual.end() ? at::Tensor() : produced->second.cpu(),
        reference->second, tolerance));
  }
  return comparisons;
}

}  // namespace ditserve::golden
