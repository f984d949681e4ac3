#include "core/checkpoints/json_output.h"

#include <fstream>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace ditserve::checkpoints {

absl::Status CreateFolder(const std::filesystem::path& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("cannot create ", dir.string(), ": ", error.message()));
  }
  return absl::OkStatus();
}

absl::Status WriteJsonFile(const std::filesystem::path& path,
                           const nlohmann::json& json) {
  std::ofstream out(path, std::ios::binary);
  out << json.dump(2) << "\n";
  out.close();
  if (!out) {
    return absl::InternalError(absl::StrCat("cannot write ", path.string()));
  }
  return absl::OkStatus();
}

}  // namespace ditserve::checkpoints
