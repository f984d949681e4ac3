#ifndef DITSERVE_CORE_MODELS_TEXT_TOKEN_IDS_H_
#define DITSERVE_CORE_MODELS_TEXT_TOKEN_IDS_H_

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/tokenizers/tokenized_text.h"

namespace ditserve::models {

// A tokenizer's `tokenizer(text, padding="max_length", max_length=...,
// truncation=True)`.
using PaddedEncoder = std::function<absl::StatusOr<tokenizers::TokenizedText>(
    absl::string_view text, int max_length)>;

// [B, max_length] int64 ids of `prompts` on `device`, each tokenized by
// `encode`; a tokenizer error names the prompt's index.
absl::StatusOr<at::Tensor> PaddedTokenIds(
    const std::vector<std::string>& prompts, int max_length,
    const PaddedEncoder& encode, const c10::Device& device);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_TEXT_TOKEN_IDS_H_
