#include "core/models/text/t5_prompt_encoder.h"

#include <torch/torch.h>

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace ditserve::models {

T5PromptEncoder::T5PromptEncoder(tokenizers::T5Tokenizer tokenizer,
                                 std::shared_ptr<T5EncoderModel> text_encoder,
                                 Placement placement)
    : tokenizer_(std::move(tokenizer)),
      text_encoder_(std::move(text_encoder)),
      placement_(placement) {}

absl::StatusOr<std::unique_ptr<T5PromptEncoder>> T5PromptEncoder::Load(
    const std::string& pipeline_dir, const Placement& placement) {
  ASSIGN_OR_RETURN(tokenizers::T5Tokenizer tokenizer,
                   tokenizers::T5Tokenizer::Load(pipeline_dir + "/tokenizer"));
  ASSIGN_OR_RETURN(
      std::shared_ptr<T5EncoderModel> text_encoder,
      LoadT5EncoderModel(pipeline_dir + "/text_encoder", placement));
  return std::unique_ptr<T5PromptEncoder>(new T5PromptEncoder(
      std::move(tokenizer), std::move(text_encoder), placement));
}

absl::StatusOr<T5PromptStates> T5PromptEncoder::Encode(
    const std::vector<std::string>& prompts, int max_sequence_length,
    T5Padding padding) {
  if (prompts.empty()) {
    return absl::InvalidArgumentError(
        "prompts is empty; expected at least one");
  }
  std::vector<int64_t> ids;
  std::vector<int64_t> mask;
  for (size_t i = 0; i < prompts.size(); ++i) {
    absl::StatusOr<tokenizers::TokenizedText> tokens =
        tokenizer_.EncodePadded(prompts[i], max_sequence_length);
    if (!tokens.ok()) {
      return absl::Status(
          tokens.status().code(),
          absl::StrCat("prompt[", i, "]: ", tokens.status().message()));
    }
    ids.insert(ids.end(), tokens->input_ids.begin(), tokens->input_ids.end());
    mask.insert(mask.end(), tokens->attention_mask.begin(),
                tokens->attention_mask.end());
  }
  const int64_t batch = static_cast<int64_t>(prompts.size());
  T5PromptStates out;
  out.mask = torch::tensor(mask, torch::kLong)
                 .view({batch, max_sequence_length})
                 .to(placement_.device);
  const at::Tensor input_ids = torch::tensor(ids, torch::kLong)
                                   .view({batch, max_sequence_length})
                                   .to(placement_.device);
  torch::NoGradGuard no_grad;
  ASSIGN_OR_RETURN(out.states,
                   text_encoder_->Forward(
                       input_ids, padding == T5Padding::kMasked
                                      ? std::optional<at::Tensor>(out.mask)
                                      : std::nullopt));
  return out;
}

}  // namespace ditserve::models
