#ifndef DITSERVE_CORE_MODELS_TEXT_TEXT_ENCODER_INPUTS_H_
#define DITSERVE_CORE_MODELS_TEXT_TEXT_ENCODER_INPUTS_H_

// Input checks and mask biases shared by the T5 and CLIP text encoders.

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <optional>

#include "absl/status/status.h"

namespace ditserve::models {

// OK when `input_ids` is an integer [B, S] tensor (B, S >= 1) with every id
// in [0, vocab_size), and `attention_mask`, when given, an integer or bool
// [B, S] tensor. INVALID_ARGUMENT naming the input otherwise.
absl::Status CheckTextEncoderInputs(
    const at::Tensor& input_ids,
    const std::optional<at::Tensor>& attention_mask, int64_t vocab_size);

// The most negative finite value of `dtype` (torch.finfo(dtype).min), which
// transformers adds to masked attention scores.
double LowestFinite(c10::ScalarType dtype);

// [B, 1, 1, S]: 0 where `attention_mask` [B, S] is 1, finfo(dtype).min where
// it is 0 (transformers' extended / 4-D attention mask).
at::Tensor AdditiveKeyMask(const at::Tensor& attention_mask,
                           c10::ScalarType dtype, c10::Device device);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_TEXT_TEXT_ENCODER_INPUTS_H_
