#ifndef DITSERVE_CORE_FAMILIES_PIXART_PIXART_PROMPT_ENCODER_H_
#define DITSERVE_CORE_FAMILIES_PIXART_PIXART_PROMPT_ENCODER_H_

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/models/component_weights.h"
#include "core/models/text/t5_encoder_model.h"
#include "core/tokenizers/t5_tokenizer.h"

namespace ditserve::families {

struct PixArtPromptEmbeddings {
  // [B, max_sequence_length, d_model]: T5 last hidden state, computed with
  // the attention mask.
  at::Tensor prompt_embeds;
  // [B, max_sequence_length] int64: 1 for a token, 0 for padding.
  at::Tensor prompt_attention_mask;
};

// PixArt pipelines' encode_prompt without caption cleaning: T5 (tokenizer/,
// text_encoder/) padded to max_sequence_length, run with its attention mask,
// which the transformer's cross-attention uses again. The negative prompt is
// encoded the same way, padded to the same length.
class PixArtPromptEncoder {
 public:
  static absl::StatusOr<std::unique_ptr<PixArtPromptEncoder>> Load(
      const std::string& pipeline_dir, const models::Placement& placement);

  // One row per prompt. INVALID_ARGUMENT for no prompts, a prompt that is not
  // UTF-8 or a max_sequence_length that cannot hold `</s>`.
  absl::StatusOr<PixArtPromptEmbeddings> Encode(
      const std::vector<std::string>& prompts, int max_sequence_length);

 private:
  PixArtPromptEncoder(tokenizers::T5Tokenizer tokenizer,
                      std::shared_ptr<models::T5EncoderModel> text_encoder,
                      models::Placement placement);

  tokenizers::T5Tokenizer tokenizer_;
  std::shared_ptr<models::T5EncoderModel> text_encoder_;
  models::Placement placement_;
};

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_PIXART_PIXART_PROMPT_ENCODER_H_
