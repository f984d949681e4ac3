#include "core/pipelines/text/flux_prompt_encoder.h"

#include <torch/torch.h>

#include <utility>

#include "core/pipelines/text/token_ids.h"

namespace ditserve::pipelines {

FluxPromptEncoder::FluxPromptEncoder(
    tokenizers::CLIPTokenizer clip_tokenizer,
    std::shared_ptr<models::CLIPTextModel> clip,
    tokenizers::T5Tokenizer t5_tokenizer,
    std::shared_ptr<models::T5EncoderModel> t5, models::Placement placement)
    : clip_tokenizer_(std::move(clip_tokenizer)),
      clip_(std::move(clip)),
      t5_tokenizer_(std::move(t5_tokenizer)),
      t5_(std::move(t5)),
      placement_(placement) {}

absl::StatusOr<std::unique_ptr<FluxPromptEncoder>> FluxPromptEncoder::Load(
    const std::string& pipeline_dir, const models::Placement& placement) {
  absl::StatusOr<tokenizers::CLIPTokenizer> clip_tokenizer =
      tokenizers::CLIPTokenizer::Load(pipeline_dir + "/tokenizer");
  if (!clip_tokenizer.ok()) return clip_tokenizer.status();
  absl::StatusOr<std::shared_ptr<models::CLIPTextModel>> clip =
      models::LoadCLIPTextModel(pipeline_dir + "/text_encoder", placement);
  if (!clip.ok()) return clip.status();
  absl::StatusOr<tokenizers::T5Tokenizer> t5_tokenizer =
      tokenizers::T5Tokenizer::Load(pipeline_dir + "/tokenizer_2");
  if (!t5_tokenizer.ok()) return t5_tokenizer.status();
  absl::StatusOr<std::shared_ptr<models::T5EncoderModel>> t5 =
      models::LoadT5EncoderModel(pipeline_dir + "/text_encoder_2", placement);
  if (!t5.ok()) return t5.status();
  return std::unique_ptr<FluxPromptEncoder>(new FluxPromptEncoder(
      *std::move(clip_tokenizer), *std::move(clip), *std::move(t5_tokenizer),
      *std::move(t5), placement));
}

absl::StatusOr<FluxPromptEmbeddings> FluxPromptEncoder::Encode(
    const std::vector<std::string>& prompts, int max_sequence_length) {
  FluxPromptEmbeddings out;
  absl::StatusOr<at::Tensor> clip_ids = PaddedTokenIds(
      prompts, clip_tokenizer_.model_max_length(),
      [this](absl::string_view text, int length) {
        return clip_tokenizer_.EncodePadded(text, length);
      },
      placement_.device);
  if (!clip_ids.ok()) return clip_ids.status();
  absl::StatusOr<at::Tensor> t5_ids = PaddedTokenIds(
      prompts, max_sequence_length,
      [this](absl::string_view text, int length) {
        return t5_tokenizer_.EncodePadded(text, length);
      },
      placement_.device);
  if (!t5_ids.ok()) return t5_ids.status();
  out.clip_input_ids = *clip_ids;
  out.t5_input_ids = *t5_ids;

  torch::NoGradGuard no_grad;
  absl::StatusOr<models::CLIPTextOutput> clip = clip_->Forward(*clip_ids);
  if (!clip.ok()) return clip.status();
  out.pooled_prompt_embeds = clip->pooler_output;
  absl::StatusOr<at::Tensor> t5 = t5_->Forward(*t5_ids);
  if (!t5.ok()) return t5.status();
  out.prompt_embeds = *t5;
  return out;
}

}  // namespace ditserve::pipelines
