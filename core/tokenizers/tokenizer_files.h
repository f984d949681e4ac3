#ifndef DITSERVE_CORE_TOKENIZERS_TOKENIZER_FILES_H_
#define DITSERVE_CORE_TOKENIZERS_TOKENIZER_FILES_H_

// Reading the files of a tokenizer folder as transformers' save_pretrained
// writes them. Every error names the file.

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace ditserve::tokenizers {

// The whole file. NOT_FOUND when it does not exist, INTERNAL when it cannot
// be read.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

// `tokenizer_config.json` of `dir`, or an empty object when the folder has
// none (a checkpoint may ship only the model files; the tokenizer classes'
// defaults apply then).
absl::StatusOr<nlohmann::json> ReadOptionalTokenizerConfig(
    const std::string& dir);

// The text of a special token entry (`"pad_token": "!"` or
// `"pad_token": {"content": "!", ...}`), nullopt when absent or null.
std::optional<std::string> SpecialTokenContent(const nlohmann::json& config,
                                               const char* key);

}  // namespace ditserve::tokenizers

#endif  // DITSERVE_CORE_TOKENIZERS_TOKENIZER_FILES_H_
