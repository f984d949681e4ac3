#include "core/families/pixart/pixart_prompt_encoder.h"

#include <torch/torch.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace ditserve::families {

PixArtPromptEncoder::PixArtPromptEncoder(
    tokenizers::T5Tokenizer tokenizer,
    std::shared_ptr<models::T5EncoderModel> text_encoder,
    models::Placement placement)
    : tokenizer_(std::move(tokenizer)),
      text_encoder_(std::move(text_encoder)),
      placement_(placement) {}

absl::StatusOr<std::unique_ptr<PixArtPromptEncoder>> PixArtPromptEncoder::Load(
    const std::string& pipeline_dir, const models::Placement& placement) {
  ASSIGN_OR_RETURN(tokenizers::T5Tokenizer tokenizer,
                   tokenizers::T5Tokenizer::Load(pipeline_dir + "/tokenizer"));
  ASSIGN_OR_RETURN(
      std::shared_ptr<models::T5EncoderModel> text_encoder,
      models::LoadT5EncoderModel(pipeline_dir + "/text_encoder", placement));
  return std::unique_ptr<PixArtPromptEncoder>(new PixArtPromptEncoder(
      std::move(tokenizer), std::move(text_encoder), placement));
}

absl::StatusOr<PixArtPromptEmbeddings> PixArtPromptEncoder::Encode(
    const std::vector<std::string>& prompts, int max_sequence_length) {
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
  PixArtPromptEmbeddings out;
  out.prompt_attention_mask = torch::tensor(mask, torch::kLong)
                                  .view({batch, max_sequence_length})
                                  .to(placement_.device);
  const at::Tensor input_ids = torch::tensor(ids, torch::kLong)
                                   .view({batch, max_sequence_length})
                                   .to(placement_.device);
  torch::NoGradGuard no_grad;
  ASSIGN_OR_RETURN(
      at::Tensor states,
      text_encoder_->Forward(input_ids, out.prompt_attention_mask));
  out.prompt_embeds = states;
  return out;
}

}  // namespace ditserve::families
