#ifndef DITSERVE_CORE_CHECKPOINTS_JSON_OUTPUT_H_
#define DITSERVE_CORE_CHECKPOINTS_JSON_OUTPUT_H_

#include <filesystem>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace ditserve::checkpoints {

// `dir` and its parents; INTERNAL naming the folder when that fails.
absl::Status CreateFolder(const std::filesystem::path& dir);

// `json` indented by 2 with a final newline, as save_pretrained writes its
// files; INTERNAL naming the path when it cannot be written.
absl::Status WriteJsonFile(const std::filesystem::path& path,
                           const nlohmann::json& json);

}  // namespace ditserve::checkpoints

#endif  // DITSERVE_CORE_CHECKPOINTS_JSON_OUTPUT_H_
