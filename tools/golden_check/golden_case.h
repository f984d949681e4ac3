#ifndef DITSERVE_TOOLS_GOLDEN_CHECK_GOLDEN_CASE_H_
#define DITSERVE_TOOLS_GOLDEN_CHECK_GOLDEN_CASE_H_

// One case folder in the format of shared/golden/README.md: case.json says
// what was computed ("kind"), with which inputs, and how close a
// re-implementation must come to the stored outputs.

#include <string>

#include "absl/status/statusor.h"
#include "core/io/safetensors.h"
#include "core/models/component_weights.h"
#include "nlohmann/json.hpp"

namespace ditserve::golden {

struct GoldenCase {
  std::string dir;
  std::string name;     // case.json "name", else the folder name.
  std::string kind;     // e.g. "diffusers.FluxTransformer2DModel".
  nlohmann::json spec;  // All of case.json.
  // Where the model runners load and run: the CPU unless --device cuda.
  models::Placement placement;

  // `dir`/`file_name`.
  std::string Path(const std::string& file_name) const;
  // The folder of the model's config.json and weights: case.json
  // "weights_dir" (relative to `dir`) for a case that reuses another case's
  // model, else `dir`.
  std::string ModelDir() const;
  // The safetensors file case.json names under `file_key` (e.g.
  // "inputs_file"), or `default_name` when it names none.
  absl::StatusOr<io::TensorMap> ReadTensors(
      const std::string& file_key, const std::string& default_name) const;
  // ReadTensors' tensors on placement's device, unconverted.
  absl::StatusOr<io::TensorMap> ReadModelInputs(
      const std::string& file_key, const std::string& default_name) const;
};

// The tensor `name` of `tensors` (read from one of the case's files);
// INVALID_ARGUMENT naming the case folder when it is missing.
absl::StatusOr<at::Tensor> RequireTensor(const GoldenCase& golden_case,
                                         const io::TensorMap& tensors,
                                         const std::string& name);

// Reads `dir`/case.json; errors name the folder.
absl::StatusOr<GoldenCase> ReadGoldenCase(const std::string& dir);

}  // namespace ditserve::golden

#endif  // DITSERVE_TOOLS_GOLDEN_CHECK_GOLDEN_CASE_H_
