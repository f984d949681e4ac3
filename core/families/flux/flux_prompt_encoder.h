#ifndef DITSERVE_CORE_FAMILIES_FLUX_FLUX_PROMPT_ENCODER_H_
#define DITSERVE_CORE_FAMILIES_FLUX_FLUX_PROMPT_ENCODER_H_

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/models/component_weights.h"
#include "core/models/text/clip_text_model.h"
#include "core/models/text/t5_encoder_model.h"
#include "core/tokenizers/clip_tokenizer.h"
#include "core/tokenizers/t5_tokenizer.h"

namespace ditserve::families {

struct FluxPromptEmbeddings {
  // [B, max_sequence_length, T5 d_model]: T5 last hidden state.
  at::Tensor prompt_embeds;
  // [B, CLIP hidden]: CLIP pooled output.
  at::Tensor pooled_prompt_embeds;
  // The ids fed to each encoder, [B, 77] and [B, max_sequence_length].
  at::Tensor clip_input_ids;
  at::Tensor t5_input_ids;
};

// FluxPipeline.encode_prompt: CLIP (tokenizer/, text_encoder/) padded to its
// model_max_length for the pooled embedding, T5 (tokenizer_2/,
// text_encoder_2/) padded to max_sequence_length for the sequence; neither
// encoder gets an attention mask, as in diffusers.
class FluxPromptEncoder {
 public:
  static absl::StatusOr<std::unique_ptr<FluxPromptEncoder>> Load(
      const std::string& pipeline_dir, const models::Placement& placement);

  // One row per prompt. INVALID_ARGUMENT for a prompt that is not UTF-8.
  absl::StatusOr<FluxPromptEmbeddings> Encode(
      const std::vector<std::string>& prompts, int max_sequence_length);

 private:
  FluxPromptEncoder(tokenizers::CLIPTokenizer clip_tokenizer,
                    std::shared_ptr<models::CLIPTextModel> clip,
                    tokenizers::T5Tokenizer t5_tokenizer,
                    std::shared_ptr<models::T5EncoderModel> t5,
                    models::Placement placement);

  tokenizers::CLIPTokenizer clip_tokenizer_;
  std::shared_ptr<models::CLIPTextModel> clip_;
  tokenizers::T5Tokenizer t5_tokenizer_;
  std::shared_ptr<models::T5EncoderModel> t5_;
  models::Placement placement_;
};

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_FLUX_FLUX_PROMPT_ENCODER_H_
