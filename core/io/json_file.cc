#include "core/io/json_file.h"

#include <fstream>
#include <limits>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace ditserve::io {
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
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read JSON file ", path));
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParsePythonJson(text.str(), path);
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

}  // namespace ditserve::io
