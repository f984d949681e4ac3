#include "core/families/sd3/sd3_prompt_embeds.h"

#include <torch/torch.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "core/models/tensor_checks.h"

namespace ditserve::families {

absl::StatusOr<SD3PromptEmbeds> AssembleSD3PromptEmbeds(
    const SD3TextEncoderStates& states, int64_t joint_attention_dim,
    int64_t t5_tokens) {
  using models::kAnySize;
  absl::Status status = models::CheckShape(
      "clip_l_hidden", states.clip_l_hidden, {kAnySize, kAnySize, kAnySize});
  if (!status.ok()) return status;
  const int64_t batch = states.clip_l_hidden.size(0);
  const int64_t clip_tokens = states.clip_l_hidden.size(1);
  status.Update(models::CheckShape("clip_g_hidden", states.clip_g_hidden,
                                   {batch, clip_tokens, kAnySize}));
  status.Update(models::CheckShape("clip_l_pooled", states.clip_l_pooled,
                                   {batch, kAnySize}));
  status.Update(models::CheckShape("clip_g_pooled", states.clip_g_pooled,
                                   {batch, kAnySize}));
  if (states.t5_hidden.has_value()) {
    status.Update(models::CheckShape("t5_hidden", *states.t5_hidden,
                                     {batch, t5_tokens, joint_attention_dim}));
  }
  if (!status.ok()) return status;
  const int64_t clip_width =
      states.clip_l_hidden.size(2) + states.clip_g_hidden.size(2);
  if (clip_width > joint_attention_dim) {
    return absl::InvalidArgumentError(
        absl::StrCat("CLIP-L and CLIP-G widths ", states.clip_l_hidden.size(2),
                     " + ", states.clip_g_hidden.size(2),
                     " exceed joint_attention_dim ", joint_attention_dim));
  }
  return base::Guarded("assembling SD3 prompt embeddings", [&] {
    const at::Tensor clip = at::constant_pad_nd(
        at::cat({states.clip_l_hidden, states.clip_g_hidden}, /*dim=*/-1),
        {0, joint_attention_dim - clip_width});
    const at::Tensor t5 =
        states.t5_hidden.has_value()
            ? *states.t5_hidden
            : at::zeros({batch, t5_tokens, joint_attention_dim},
                        clip.options());
    return SD3PromptEmbeds{
        at::cat({clip, t5.to(clip.scalar_type())}, /*dim=*/-2),
        at::cat({states.clip_l_pooled, states.clip_g_pooled}, /*dim=*/-1)};
  });
}

}  // namespace ditserve::families
