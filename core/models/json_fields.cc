#include "core/models/json_fields.h"

#include <fstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ditserve::models {

absl::StatusOr<nlohmann::json> ReadJsonFile(const std::string& path) {
  std::ifstream file(path);
  if (!file) {
    return absl::NotFoundError(absl::StrCat("cannot open ", path));
  }
  nlohmann::json json = nlohmann::json::parse(file, /*cb=*/nullptr,
                                              /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not valid JSON"));
  }
  if (!json.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, " holds ", json.type_name(), "; expected a JSON object"));
  }
  return json;
}

JsonFields::JsonFields(const nlohmann::json& json, std::string source)
    : json_(json), source_(std::move(source)) {}

absl::StatusOr<const nlohmann::json*> JsonFields::Required(
    const std::string& field) const {
  const nlohmann::json* value = Optional(field);
  if (value == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_, ": field \"", field, "\" is missing or null"));
  }
  return value;
}

const nlohmann::json* JsonFields::Optional(const std::string& field) const {
  const auto it = json_.find(field);
  if (it == json_.end() || it->is_null()) return nullptr;
  return &*it;
}

absl::Status JsonFields::WrongType(const std::string& field,
                                   const nlohmann::json& value,
                                   const std::string& expected) const {
  return absl::InvalidArgumentError(absl::StrCat(source_, ": field \"", field,
                                                 "\" is ", value.dump(),
                                                 "; expected ", expected));
}

absl::StatusOr<int64_t> JsonFields::PositiveInt(
    const std::string& field) const {
  absl::StatusOr<const nlohmann::json*> value = Required(field);
  if (!value.ok()) return value.status();
  if (!(*value)->is_number_integer() || (*value)->get<int64_t>() <= 0) {
    return WrongType(field, **value, "a positive integer");
  }
  return (*value)->get<int64_t>();
}

absl::StatusOr<bool> JsonFields::Bool(const std::string& field) const {
  absl::StatusOr<const nlohmann::json*> value = Required(field);
  if (!value.ok()) return value.status();
  if (!(*value)->is_boolean()) return WrongType(field, **value, "true/false");
  return (*value)->get<bool>();
}

absl::StatusOr<std::string> JsonFields::String(const std::string& field) const {
  absl::StatusOr<const nlohmann::json*> value = Required(field);
  if (!value.ok()) return value.status();
  if (!(*value)->is_string()) return WrongType(field, **value, "a string");
  return (*value)->get<std::string>();
}

absl::StatusOr<std::vector<int64_t>> JsonFields::PositiveIntList(
    const std::string& field) const {
  absl::StatusOr<const nlohmann::json*> value = Required(field);
  if (!value.ok()) return value.status();
  std::vector<int64_t> out;
  if ((*value)->is_array() && !(*value)->empty()) {
    for (const nlohmann::json& item : **value) {
      if (!item.is_number_integer() || item.get<int64_t>() <= 0) break;
      out.push_back(item.get<int64_t>());
    }
  }
  if (out.empty() || out.size() != (*value)->size()) {
    return WrongType(field, **value, "a non-empty list of positive integers");
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> JsonFields::StringList(
    const std::string& field) const {
  absl::StatusOr<const nlohmann::json*> value = Required(field);
  if (!value.ok()) return value.status();
  std::vector<std::string> out;
  if ((*value)->is_array()) {
    for (const nlohmann::json& item : **value) {
      if (!item.is_string()) break;
      out.push_back(item.get<std::string>());
    }
  }
  if (!(*value)->is_array() || out.size() != (*value)->size()) {
    return WrongType(field, **value, "a list of strings");
  }
  return out;
}

absl::StatusOr<std::optional<int64_t>> JsonFields::OptionalPositiveInt(
    const std::string& field) const {
  if (Optional(field) == nullptr) return std::nullopt;
  absl::StatusOr<int64_t> value = PositiveInt(field);
  if (!value.ok()) return value.status();
  return *value;
}

absl::StatusOr<std::optional<double>> JsonFields::OptionalNumber(
    const std::string& field) const {
  const nlohmann::json* value = Optional(field);
  if (value == nullptr) return std::nullopt;
  if (!value->is_number()) return WrongType(field, *value, "a number or null");
  return value->get<double>();
}

absl::StatusOr<std::optional<bool>> JsonFields::OptionalBool(
    const std::string& field) const {
  const nlohmann::json* value = Optional(field);
  if (value == nullptr) return std::nullopt;
  if (!value->is_boolean()) return WrongType(field, *value, "true/false");
  return value->get<bool>();
}

}  // namespace ditserve::models
