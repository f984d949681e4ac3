#include "core/base/json.h"

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace ditserve::base {
namespace {

constexpr absl::string_view kNonFiniteTokens[] = {"-Infinity", "Infinity",
                                                  "NaN"};

// Quotes the non-finite tokens that appear outside strings.
std::string QuoteNonFiniteTokens(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < text.size()) {
        out.push_back(text[++i]);
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (absl::string_view token : kNonFiniteTokens) {
      if (text.substr(i, token.size()) == token) {
        absl::StrAppend(&out, "\"", token, "\"");
        i += token.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out.push_back(c);
  }
  return out;
}

}  // namespace

absl::StatusOr<nlohmann::json> ParsePythonJson(absl::string_view text,
                                               absl::string_view source) {
  try {
    return nlohmann::json::parse(QuoteNonFiniteTokens(text));
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, " is not valid JSON: ", e.what()));
  }
}

absl::StatusOr<nlohmann::json> ReadJsonFile(const std::string& path) {
  // A FIFO in the file's place would hold the read until a writer came.
  std::error_code ignored;
  const std::filesystem::file_status status =
      std::filesystem::status(path, ignored);
  if (std::filesystem::exists(status) &&
      !std::filesystem::is_regular_file(status)) {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON file ", path, " is not a regular file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read JSON file ", path));
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParsePythonJson(text.str(), path);
}

absl::StatusOr<nlohmann::json> ReadJsonObjectFile(const std::string& path) {
  ASSIGN_OR_RETURN(nlohmann::json json, ReadJsonFile(path));
  if (!json.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, " holds ", json.type_name(), "; expected a JSON object"));
  }
  return json;
}

absl::StatusOr<double> JsonNumber(const nlohmann::json& value) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (text == "Infinity") return std::numeric_limits<double>::infinity();
    if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("expected a number, got ", value.dump()));
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
  ASSIGN_OR_RETURN(const nlohmann::json* value, Required(field));
  if (!value->is_number_integer() || value->get<int64_t>() <= 0) {
    return WrongType(field, *value, "a positive integer");
  }
  return value->get<int64_t>();
}

absl::Status JsonFields::PositiveInts(
    std::initializer_list<std::pair<const char*, int64_t*>> fields) const {
  for (const auto& [name, target] : fields) {
    ASSIGN_OR_RETURN(*target, PositiveInt(name));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> JsonFields::Bool(const std::string& field) const {
  ASSIGN_OR_RETURN(const nlohmann::json* value, Required(field));
  if (!value->is_boolean()) return WrongType(field, *value, "true/false");
  return value->get<bool>();
}

absl::StatusOr<std::string> JsonFields::String(const std::string& field) const {
  ASSIGN_OR_RETURN(const nlohmann::json* value, Required(field));
  if (!value->is_string()) return WrongType(field, *value, "a string");
  return value->get<std::string>();
}

absl::StatusOr<std::vector<int64_t>> JsonFields::PositiveIntList(
    const std::string& field) const {
  ASSIGN_OR_RETURN(const nlohmann::json* value, Required(field));
  std::vector<int64_t> out;
  if (value->is_array() && !value->empty()) {
    for (const nlohmann::json& item : *value) {
      if (!item.is_number_integer() || item.get<int64_t>() <= 0) break;
      out.push_back(item.get<int64_t>());
    }
  }
  if (out.empty() || out.size() != value->size()) {
    return WrongType(field, *value, "a non-empty list of positive integers");
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> JsonFields::StringList(
    const std::string& field) const {
  ASSIGN_OR_RETURN(const nlohmann::json* value, Required(field));
  std::vector<std::string> out;
  if (value->is_array()) {
    for (const nlohmann::json& item : *value) {
      if (!item.is_string()) break;
      out.push_back(item.get<std::string>());
    }
  }
  if (!value->is_array() || out.size() != value->size()) {
    return WrongType(field, *value, "a list of strings");
  }
  return out;
}

absl::StatusOr<std::optional<int64_t>> JsonFields::OptionalPositiveInt(
    const std::string& field) const {
  if (Optional(field) == nullptr) return std::nullopt;
  ASSIGN_OR_RETURN(int64_t value, PositiveInt(field));
  return value;
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

}  // namespace ditserve::base
