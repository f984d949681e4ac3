#ifndef DITSERVE_CORE_MODELS_TEXT_T5_PROMPT_ENCODER_H_
#define DITSERVE_CORE_MODELS_TEXT_T5_PROMPT_ENCODER_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/models/component_weights.h"
#include "core/models/text/t5_encoder_model.h"
#include "core/tokenizers/t5_tokenizer.h"

namespace ditserve::models {

// What T5 does with the padding of prompts padded to max_sequence_length.
enum class T5Padding {
  // Padded keys are masked (PixArt, which masks them again in its
  // cross-attention).
  kMasked,
  // Every position attends to every other, padding included (CogVideoX,
  // whose pipeline passes no mask).
  kAttended,
};

struct T5PromptStates {
  // [B, max_sequence_length, d_model]: the last hidden state.
  at::Tensor states;
  // [B, max_sequence_length] int64: 1 for a token, 0 for padding.
  at::Tensor mask;
};

// The T5 prompt encoding of the pipelines with a single T5 (tokenizer/,
// text_encoder/): each prompt padded or cut to max_sequence_length, without
// caption cleaning.
class T5PromptEncoder {
 public:
  static absl::StatusOr<std::unique_ptr<T5PromptEncoder>> Load(
      const std::string& pipeline_dir, const Placement& placement);

  // One row per prompt. INVALID_ARGUMENT for no prompts, a prompt that is not
  // UTF-8 (naming its index) or a max_sequence_length that cannot hold
  // `</s>`.
  absl::StatusOr<T5PromptStates> Encode(const std::vector<std::string>& prompts,
                                        int max_sequence_length,
                                        T5Padding padding);

  // d_model: the width of the states.
  int64_t width() const { return text_encoder_->config().d_model; }

 private:
  T5PromptEncoder(tokenizers::T5Tokenizer tokenizer,
                  std::shared_ptr<T5EncoderModel> text_encoder,
                  Placement placement);

  tokenizers::T5Tokenizer tokenizer_;
  std::shared_ptr<T5EncoderModel> text_encoder_;
  Placement placement_;
};

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_TEXT_T5_PROMPT_ENCODER_H_
