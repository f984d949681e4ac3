#ifndef DITSERVE_CORE_FAMILIES_SD3_SD3_PROMPT_EMBEDS_H_
#define DITSERVE_CORE_FAMILIES_SD3_SD3_PROMPT_EMBEDS_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"

namespace ditserve::families {

// What SD3's three text encoders give for a batch of prompts.
struct SD3TextEncoderStates {
  // [B, 77, C_l] and [B, 77, C_g]: penultimate hidden states of CLIP-L
  // (text_encoder) and CLIP-G (text_encoder_2).
  at::Tensor clip_l_hidden;
  at::Tensor clip_g_hidden;
  // [B, C_l_proj] and [B, C_g_proj]: their projected pooled outputs
  // (text_embeds).
  at::Tensor clip_l_pooled;
  at::Tensor clip_g_pooled;
  // [B, S_t5, joint_attention_dim]: T5 last hidden state; nullopt when the
  // checkpoint has no T5 (diffusers then uses zeros of this shape).
  std::optional<at::Tensor> t5_hidden;
};

struct SD3PromptEmbeds {
  // [B, 77 + S_t5, joint_attention_dim].
  at::Tensor prompt_embeds;
  // [B, C_l_proj + C_g_proj].
  at::Tensor pooled_prompt_embeds;
};

// StableDiffusion3Pipeline.encode_prompt's assembly: CLIP-L and CLIP-G states
// concatenated on channels and zero-padded to joint_attention_dim, followed
// along the sequence by the T5 states (or zeros of [B, t5_tokens,
// joint_attention_dim] without T5); pooled = [CLIP-L, CLIP-G] projections.
// INVALID_ARGUMENT when batch or sequence sizes disagree or the CLIP widths
// exceed joint_attention_dim.
absl::StatusOr<SD3PromptEmbeds> AssembleSD3PromptEmbeds(
    const SD3TextEncoderStates& states, int64_t joint_attention_dim,
    int64_t t5_tokens);

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_SD3_SD3_PROMPT_EMBEDS_H_
