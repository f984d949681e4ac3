#include "core/families/sd3/sd3_prompt_encoder.h"

#include <torch/torch.h>

#include <utility>

#include "core/base/status_macros.h"
#include "core/models/text/token_ids.h"

namespace ditserve::families {
namespace {

// The penultimate layer's output, diffusers' hidden_states[-2]
// (hidden_states holds the embeddings, then each layer's output).
const at::Tensor& Penultimate(const models::CLIPTextOutput& output) {
  return output.hidden_states[output.hidden_states.size() - 2];
}

}  // namespace

SD3PromptEncoder::SD3PromptEncoder(ClipEncoder clip_l, ClipEncoder clip_g,
                                   tokenizers::T5Tokenizer t5_tokenizer,
                                   std::shared_ptr<models::T5EncoderModel> t5,
                                   int64_t joint_attention_dim,
                                   models::Placement placement)
    : clip_l_(std::move(clip_l)),
      clip_g_(std::move(clip_g)),
      t5_tokenizer_(std::move(t5_tokenizer)),
      t5_(std::move(t5)),
      joint_attention_dim_(joint_attention_dim),
      placement_(placement) {}

absl::StatusOr<SD3PromptEncoder::ClipEncoder> SD3PromptEncoder::LoadClip(
    const std::string& tokenizer_dir, const std::string& encoder_dir,
    const models::Placement& placement) {
  // The pad token comes from each tokenizer's own files (SD3's CLIP-G pads
  // with "!").
  ASSIGN_OR_RETURN(tokenizers::CLIPTokenizer tokenizer,
                   tokenizers::CLIPTokenizer::Load(tokenizer_dir));
  ASSIGN_OR_RETURN(
      std::shared_ptr<models::CLIPTextModelWithProjection> model,
      models::LoadCLIPTextModelWithProjection(encoder_dir, placement));
  return ClipEncoder{std::move(tokenizer), std::move(model)};
}

absl::StatusOr<std::unique_ptr<SD3PromptEncoder>> SD3PromptEncoder::Load(
    const std::string& pipeline_dir, int64_t joint_attention_dim,
    const models::Placement& placement) {
  ASSIGN_OR_RETURN(ClipEncoder clip_l,
                   LoadClip(pipeline_dir + "/tokenizer",
                            pipeline_dir + "/text_encoder", placement));
  ASSIGN_OR_RETURN(ClipEncoder clip_g,
                   LoadClip(pipeline_dir + "/tokenizer_2",
                            pipeline_dir + "/text_encoder_2", placement));
  ASSIGN_OR_RETURN(
      tokenizers::T5Tokenizer t5_tokenizer,
      tokenizers::T5Tokenizer::Load(pipeline_dir + "/tokenizer_3"));
  ASSIGN_OR_RETURN(
      std::shared_ptr<models::T5EncoderModel> t5,
      models::LoadT5EncoderModel(pipeline_dir + "/text_encoder_3", placement));
  return std::unique_ptr<SD3PromptEncoder>(new SD3PromptEncoder(
      std::move(clip_l), std::move(clip_g), std::move(t5_tokenizer),
      std::move(t5), joint_attention_dim, placement));
}

absl::StatusOr<models::CLIPTextOutput> SD3PromptEncoder::RunClip(
    const ClipEncoder& clip, const std::vector<std::string>& prompts) {
  ASSIGN_OR_RETURN(at::Tensor ids,
                   models::PaddedTokenIds(
                       prompts, clip.tokenizer.model_max_length(),
                       [&clip](absl::string_view text, int length) {
                         return clip.tokenizer.EncodePadded(text, length);
                       },
                       placement_.device));
  return clip.model->Forward(ids);
}

absl::StatusOr<SD3PromptEmbeds> SD3PromptEncoder::Encode(
    const std::vector<std::string>& prompts, int max_sequence_length) {
  torch::NoGradGuard no_grad;
  ASSIGN_OR_RETURN(models::CLIPTextOutput clip_l, RunClip(clip_l_, prompts));
  ASSIGN_OR_RETURN(models::CLIPTextOutput clip_g, RunClip(clip_g_, prompts));
  ASSIGN_OR_RETURN(at::Tensor t5_ids,
                   models::PaddedTokenIds(
                       prompts, max_sequence_length,
                       [this](absl::string_view text, int length) {
                         return t5_tokenizer_.EncodePadded(text, length);
                       },
                       placement_.device));
  ASSIGN_OR_RETURN(at::Tensor t5, t5_->Forward(t5_ids));
  return AssembleSD3PromptEmbeds(
      SD3TextEncoderStates{.clip_l_hidden = Penultimate(clip_l),
                           .clip_g_hidden = Penultimate(clip_g),
                           .clip_l_pooled = clip_l.text_embeds,
                           .clip_g_pooled = clip_g.text_embeds,
                           .t5_hidden = t5},
      joint_attention_dim_, max_sequence_length);
}

}  // namespace ditserve::families
