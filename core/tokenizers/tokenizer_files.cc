#include "core/tokenizers/tokenizer_files.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"

namespace ditserve::tokenizers {

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return absl::NotFoundError(
        absl::StrCat("tokenizer file ", path, " does not exist"));
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  if (!in.good() && !in.eof()) {
    return absl::InternalError(absl::StrCat("cannot read tokenizer file ", path,
                                            ": ", std::strerror(errno)));
  }
  return content.str();
}

absl::StatusOr<nlohmann::json> ReadOptionalTokenizerConfig(
    const std::string& dir) {
  const std::string path =
      (std::filesystem::path(dir) / "tokenizer_config.json").string();
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    return nlohmann::json::object();
  }
  return base::ReadJsonObjectFile(path);
}

std::optional<std::string> SpecialTokenContent(const nlohmann::json& config,
                                               const char* key) {
  auto it = config.find(key);
  if (it == config.end()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object()) {
    auto content = it->find("content");
    if (content != it->end() && content->is_string()) {
      return content->get<std::string>();
    }
  }
  return std::nullopt;
}

}  // namespace ditserve::tokenizers
