#ifndef DITSERVE_CORE_FAMILIES_SD3_SD3_PROMPT_ENCODER_H_
#define DITSERVE_CORE_FAMILIES_SD3_SD3_PROMPT_ENCODER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/families/sd3/sd3_prompt_embeds.h"
#include "core/models/component_weights.h"
#include "core/models/text/clip_text_model.h"
#include "core/models/text/t5_encoder_model.h"
#include "core/tokenizers/clip_tokenizer.h"
#include "core/tokenizers/t5_tokenizer.h"

namespace ditserve::families {

// StableDiffusion3Pipeline.encode_prompt (no clip_skip, no LoRA): CLIP-L
// (tokenizer/, text_encoder/) and CLIP-G (tokenizer_2/, text_encoder_2/),
// each padded to its model_max_length, give their penultimate hidden states
// and projected pooled outputs; T5 (tokenizer_3/, text_encoder_3/) padded to
// max_sequence_length gives the rest of the sequence (AssembleSD3PromptEmbeds).
// No encoder gets an attention mask, as in diffusers. A checkpoint without
// T5 is not supported.
class SD3PromptEncoder {
 public:
  // `joint_attention_dim` is the transformer's (the width CLIP states are
  // padded to).
  static absl::StatusOr<std::unique_ptr<SD3PromptEncoder>> Load(
      const std::string& pipeline_dir, int64_t joint_attention_dim,
      const models::Placement& placement);

  // One row per prompt. INVALID_ARGUMENT for a prompt that is not UTF-8.
  absl::StatusOr<SD3PromptEmbeds> Encode(
      const std::vector<std::string>& prompts, int max_sequence_length);

 private:
  struct ClipEncoder {
    tokenizers::CLIPTokenizer tokenizer;
    std::shared_ptr<models::CLIPTextModelWithProjection> model;
  };

  SD3PromptEncoder(ClipEncoder clip_l, ClipEncoder clip_g,
                   tokenizers::T5Tokenizer t5_tokenizer,
                   std::shared_ptr<models::T5EncoderModel> t5,
                   int64_t joint_attention_dim, models::Placement placement);

  static absl::StatusOr<ClipEncoder> LoadClip(
      const std::string& tokenizer_dir, const std::string& encoder_dir,
      const models::Placement& placement);
  // `clip` run on `prompts` padded to its model_max_length.
  absl::StatusOr<models::CLIPTextOutput> RunClip(
      const ClipEncoder& clip, const std::vector<std::string>& prompts);

  ClipEncoder clip_l_;
  ClipEncoder clip_g_;
  tokenizers::T5Tokenizer t5_tokenizer_;
  std::shared_ptr<models::T5EncoderModel> t5_;
  int64_t joint_attention_dim_;
  models::Placement placement_;
};

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_SD3_SD3_PROMPT_ENCODER_H_
