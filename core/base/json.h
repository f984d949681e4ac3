#ifndef DITSERVE_CORE_BASE_JSON_H_
#define DITSERVE_CORE_BASE_JSON_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace ditserve::base {

// Parses JSON as Python's json module writes it: the bare tokens NaN,
// Infinity and -Infinity (which diffusers writes, e.g. "lambda_min_clipped":
// -Infinity) become the strings "NaN", "Infinity" and "-Infinity";
// JsonNumber() reads them back as numbers. `source` names the text in errors.
absl::StatusOr<nlohmann::json> ParsePythonJson(absl::string_view text,
                                               absl::string_view source);

// Reads and parses a file with ParsePythonJson; errors name the path.
absl::StatusOr<nlohmann::json> ReadJsonFile(const std::string& path);

// ReadJsonFile, and INVALID_ARGUMENT naming the path unless the file holds
// an object (every config.json, model_index.json and index of a checkpoint).
absl::StatusOr<nlohmann::json> ReadJsonObjectFile(const std::string& path);

// A number, or one of the strings ParsePythonJson makes of NaN / ±Infinity.
absl::StatusOr<double> JsonNumber(const nlohmann::json& value);

// Typed reads of a component config (config.json). Errors are
// INVALID_ARGUMENT naming the source, the field, the value found and what was
// expected.
class JsonFields {
 public:
  // `source` names the JSON in errors, e.g. "transformer/config.json".
  JsonFields(const nlohmann::json& json, std::string source);

  absl::StatusOr<int64_t> PositiveInt(const std::string& field) const;
  // *target = PositiveInt(name) for each (name, target), in order; the first
  // error is returned.
  absl::Status PositiveInts(
      std::initializer_list<std::pair<const char*, int64_t*>> fields) const;
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

}  // namespace ditserve::base

#endif  // DITSERVE_CORE_BASE_JSON_H_
