#include "tools/golden_check/golden_case.h"

#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"

namespace ditserve::golden {

std::string GoldenCase::Path(const std::string& file_name) const {
  return (std::filesystem::path(dir) / file_name).string();
}

std::string GoldenCase::ModelDir() const {
  auto it = spec.find("weights_dir");
  if (it == spec.end() || !it->is_string()) return dir;
  return Path(it->get<std::string>());
}

absl::StatusOr<io::TensorMap> GoldenCase::ReadTensors(
    const std::string& file_key, const std::string& default_name) const {
  std::string file_name = default_name;
  auto it = spec.find(file_key);
  if (it != spec.end() && it->is_string()) file_name = it->get<std::string>();
  return io::ReadAllTensors(Path(file_name));
}

absl::StatusOr<io::TensorMap> GoldenCase::ReadModelInputs(
    const std::string& file_key, const std::string& default_name) const {
  ASSIGN_OR_RETURN(io::TensorMap tensors, ReadTensors(file_key, default_name));
  for (auto& [name, tensor] : tensors) tensor = tensor.to(placement.device);
  return tensors;
}

absl::StatusOr<at::Tensor> RequireTensor(const GoldenCase& golden_case,
                                         const io::TensorMap& tensors,
                                         const std::string& name) {
  auto it = tensors.find(name);
  if (it == tensors.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        golden_case.dir, ": the case has no tensor \"", name, "\""));
  }
  return it->second;
}

absl::StatusOr<GoldenCase> ReadGoldenCase(const std::string& dir) {
  ASSIGN_OR_RETURN(
      nlohmann::json spec,
      base::ReadJsonFile((std::filesystem::path(dir) / "case.json").string()));
  auto kind = spec.find("kind");
  if (!spec.is_object() || kind == spec.end() || !kind->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir, "/case.json has no \"kind\" string"));
  }
  GoldenCase golden_case;
  golden_case.dir = dir;
  golden_case.kind = kind->get<std::string>();
  auto name = spec.find("name");
  golden_case.name =
      name != spec.end() && name->is_string()
          ? name->get<std::string>()
          : std::filesystem::path(dir).lexically_normal().filename().string();
  golden_case.spec = std::move(spec);
  return golden_case;
}

}  // namespace ditserve::golden
