#include "core/schedulers/scheduler_config.h"

#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/json.h"

namespace ditserve::schedulers {

absl::StatusOr<nlohmann::json> ReadSchedulerConfig(
    const std::string& path_or_dir) {
  std::error_code ec;
  std::string path = path_or_dir;
  if (std::filesystem::is_directory(path_or_dir, ec)) {
    path =
        (std::filesystem::path(path_or_dir) / "scheduler_config.json").string();
  }
  absl::StatusOr<nlohmann::json> json = base::ReadJsonFile(path);
  if (json.ok() && !json->is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("scheduler config ", path, " is not a JSON object"));
  }
  return json;
}

ConfigReader::ConfigReader(const nlohmann::json& json, std::string source)
    : json_(json), source_(std::move(source)) {}

const nlohmann::json* ConfigReader::Find(const std::string& key) const {
  auto it = json_.find(key);
  if (it == json_.end() || it->is_null()) return nullptr;
  return &*it;
}

void ConfigReader::Fail(const std::string& key, const std::string& problem) {
  if (!status_.ok()) return;
  status_ = absl::InvalidArgumentError(
      absl::StrCat(source_, ": \"", key, "\" ", problem));
}

void ConfigReader::WrongValue(const std::string& key,
                              const nlohmann::json& value,
                              const std::string& expected) {
  Fail(key, absl::StrCat("is ", value.dump(), "; expected ", expected));
}

double ConfigReader::Number(const std::string& key, double default_value) {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return default_value;
  absl::StatusOr<double> number = base::JsonNumber(*value);
  if (!number.ok()) {
    WrongValue(key, *value, "a number");
    return default_value;
  }
  return *number;
}

int64_t ConfigReader::Int(const std::string& key, int64_t default_value) {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return default_value;
  if (!value->is_number_integer()) {
    WrongValue(key, *value, "an integer");
    return default_value;
  }
  return value->get<int64_t>();
}

bool ConfigReader::Bool(const std::string& key, bool default_value) {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return default_value;
  if (!value->is_boolean()) {
    WrongValue(key, *value, "true or false");
    return default_value;
  }
  return value->get<bool>();
}

std::string ConfigReader::String(const std::string& key,
                                 std::string default_value) {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return default_value;
  if (!value->is_string()) {
    WrongValue(key, *value, "a string");
    return default_value;
  }
  return value->get<std::string>();
}

std::string ConfigReader::Choice(const std::string& key,
                                 std::string default_value,
                                 const std::vector<std::string>& allowed) {
  std::string value = String(key, default_value);
  for (const std::string& option : allowed) {
    if (value == option) return value;
  }
  Fail(key, absl::StrCat("is \"", value, "\"; this implementation supports ",
                         absl::StrJoin(allowed, ", ")));
  return default_value;
}

std::optional<double> ConfigReader::OptionalNumber(const std::string& key) {
  if (Find(key) == nullptr) return std::nullopt;
  return Number(key, 0.0);
}

std::optional<std::vector<double>> ConfigReader::OptionalNumberList(
    const std::string& key) {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return std::nullopt;
  std::vector<double> numbers;
  if (value->is_array()) {
    for (const nlohmann::json& item : *value) {
      absl::StatusOr<double> number = base::JsonNumber(item);
      if (!number.ok()) break;
      numbers.push_back(*number);
    }
  }
  if (!value->is_array() || numbers.size() != value->size()) {
    WrongValue(key, *value, "a list of numbers");
    return std::nullopt;
  }
  return numbers;
}

void ConfigReader::RequireBool(const std::string& key, bool supported) {
  if (Bool(key, supported) != supported) {
    Fail(key, absl::StrCat("is ", supported ? "false" : "true",
                           "; this implementation supports only ",
                           supported ? "true" : "false"));
  }
}

}  // namespace ditserve::schedulers
