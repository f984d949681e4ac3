#ifndef DITSERVE_CORE_MODELS_JSON_FIELDS_H_
#define DITSERVE_CORE_MODELS_JSON_FIELDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace ditserve::models {

// Reads and parses a JSON file; errors name the path.
absl::StatusOr<nlohmann::json> ReadJsonFile(const std::string& path);

// Typed reads of a component config (config.json). Errors are
// INVALID_ARGUMENT naming the source, the field, the value found and what was
// expected.
class JsonFields {
 public:
  // `source` names the JSON in errors, e.g. "transformer/config.json".
  JsonFields(const nlohmann::json& json, std::string source);

  absl::StatusOr<int64_t> PositiveInt(const std::string& field) const;
  absl::StatusOr<bool> Bool(const std::string& field) const;
  absl::StatusOr<std::string> String(const std::string& field) const;
  absl::StatusOr<std::vector<int64_t>> PositiveIntList(
      const std::string& field) const;
  absl::StatusOr<std::vector<std::string>> StringList(
      const std::string& field) const;
  // Absent or null is std::nullopt.
  absl::StatusOr<std::optional<int64_t>> OptionalPositiveInt(
      const std::string& field) const;
  absl::StatusOr<std::optional<double>> OptionalNumber(
      const std::string& field) const;
  absl::StatusOr<std::optional<bool>> OptionalBool(
      const std::string& field) const;

 private:
  absl::StatusOr<const nlohmann::json*> Required(
      const std::string& field) const;
  // Absent or null -> nullptr.
  const nlohmann::json* Optional(const std::string& field) const;
  absl::Status WrongType(const std::string& field, const nlohmann::json& value,
                         const std::string& expected) const;

  const nlohmann::json& json_;
  std::string source_;
};

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_JSON_FIELDS_H_
