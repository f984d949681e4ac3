#include "core/models/text/t5_encoder_model.h"

#include <torch/torch.h>

#include <exception>
#include <filesystem>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "core/models/text/text_encoder_inputs.h"
#include "core/models/text/text_encoder_weights.h"

namespace ditserve::models {

T5EncoderModel::T5EncoderModel(const T5EncoderConfig& config)
    : config_(config) {
  shared_ =
      register_module("shared", Embedding(config.vocab_size, config.d_model));
  auto encoder =
      register_module("encoder", std::make_shared<torch::nn::Module>());
  auto block_list = encoder->register_module("block", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.num_layers; ++i) {
    // Only block 0 owns the relative position bias; every block uses it.
    blocks_.push_back(T5Block(config, /*has_relative_attention_bias=*/i == 0));
    block_list->push_back(blocks_.back());
  }
  final_layer_norm_ = encoder->register_module(
      "final_layer_norm",
      T5LayerNorm(config.d_model, config.layer_norm_epsilon));
}

absl::StatusOr<at::Tensor> T5EncoderModel::Forward(
    const at::Tensor& input_ids,
    const std::optional<at::Tensor>& attention_mask) {
  RETURN_IF_ERROR(
      CheckTextEncoderInputs(input_ids, attention_mask, config_.vocab_size));
  return base::Guarded("T5EncoderModel forward failed", [&] {
    return ForwardUnchecked(input_ids, attention_mask);
  });
}

at::Tensor T5EncoderModel::ForwardUnchecked(
    const at::Tensor& input_ids,
    const std::optional<at::Tensor>& attention_mask) {
  torch::NoGradGuard no_grad;
  const at::Tensor ids = input_ids.to(shared_->weight.device());
  at::Tensor hidden = shared_->forward(ids);
  const int64_t length = ids.size(1);
  at::Tensor position_bias =
      blocks_.front()->attention()->ComputeBias(length, length);
  if (attention_mask.has_value()) {
    position_bias =
        position_bias +
        AdditiveKeyMask(*attention_mask, hidden.scalar_type(), hidden.device());
  }
  position_bias = position_bias.to(hidden.scalar_type());
  for (T5Block& block : blocks_) {
    hidden = block->Forward(hidden, position_bias);
  }
  return final_layer_norm_->Forward(hidden);
}

absl::StatusOr<std::shared_ptr<T5EncoderModel>> LoadT5EncoderModel(
    const std::string& component_dir, const Placement& placement) {
  const std::string config_path =
      (std::filesystem::path(component_dir) / "config.json").string();
  ASSIGN_OR_RETURN(nlohmann::json json, base::ReadJsonObjectFile(config_path));
  ASSIGN_OR_RETURN(T5EncoderConfig config,
                   T5EncoderConfig::FromJson(json, config_path));
  auto model = std::make_shared<T5EncoderModel>(config);
  RETURN_IF_ERROR(LoadTextEncoderWeights(
      *model, component_dir, placement,
      /*allow_unexpected=*/{"encoder.embed_tokens.weight"},
      /*keep_in_float32=*/{"wo"}));
  return model;
}

}  // namespace ditserve::models
