#include "core/models/text/token_ids.h"

#include <torch/torch.h>

#include <cstdint>

#include "absl/strings/str_cat.h"

namespace ditserve::models {

absl::StatusOr<at::Tensor> PaddedTokenIds(
    const std::vector<std::string>& prompts, int max_length,
    const PaddedEncoder& encode, const c10::Device& device) {
  std::vector<int64_t> ids;
  ids.reserve(prompts.size() * max_length);
  for (size_t i = 0; i < prompts.size(); ++i) {
    absl::StatusOr<tokenizers::TokenizedText> tokens =
        encode(prompts[i], max_length);
    if (!tokens.ok()) {
      return absl::Status(
          tokens.status().code(),
          absl::StrCat("prompt[", i, "]: ", tokens.status().message()));
    }
    ids.insert(ids.end(), tokens->input_ids.begin(), tokens->input_ids.end());
  }
  return torch::tensor(ids, torch::kLong)
      .view({static_cast<int64_t>(prompts.size()), max_length})
      .to(device);
}

}  // namespace ditserve::models
