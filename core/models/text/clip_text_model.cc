#include "core/models/text/clip_text_model.h"

#include <torch/torch.h>

#include <exception>
#include <filesystem>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "core/models/text/text_encoder_inputs.h"
#include "core/models/text/text_encoder_weights.h"

namespace ditserve::models {
namespace {

constexpr char kPositionIds[] = "text_model.embeddings.position_ids";

// Checks the inputs, then runs `text_model`, turning LibTorch errors into
// INTERNAL naming `model_name`.
absl::StatusOr<CLIPTextOutput> RunTextTransformer(
    CLIPTextTransformer& text_model, const CLIPTextConfig& config,
    const char* model_name, const at::Tensor& input_ids,
    const std::optional<at::Tensor>& attention_mask) {
  RETURN_IF_ERROR(
      CheckTextEncoderInputs(input_ids, attention_mask, config.vocab_size));
  if (input_ids.size(1) > config.max_position_embeddings) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input_ids hold ", input_ids.size(1), " tokens; ", model_name,
        " has max_position_embeddings ", config.max_position_embeddings));
  }
  return base::Guarded(absl::StrCat(model_name, " forward failed"), [&] {
    torch::NoGradGuard no_grad;
    const c10::Device device = text_model->parameters().front().device();
    std::optional<at::Tensor> mask;
    if (attention_mask.has_value()) mask = attention_mask->to(device);
    CLIPTextTransformerOutput out =
        text_model->Forward(input_ids.to(device, at::kLong), mask);
    return CLIPTextOutput{std::move(out.last_hidden_state),
                          std::move(out.pooler_output),
                          std::move(out.hidden_states), at::Tensor()};
  });
}

absl::StatusOr<CLIPTextConfig> ReadCLIPTextConfig(
    const std::string& component_dir) {
  const std::string path =
      (std::filesystem::path(component_dir) / "config.json").string();
  ASSIGN_OR_RETURN(nlohmann::json json, base::ReadJsonObjectFile(path));
  return CLIPTextConfig::FromJson(json, path);
}

template <typename Model>
absl::StatusOr<std::shared_ptr<Model>> LoadCLIP(
    const std::string& component_dir, const Placement& placement) {
  ASSIGN_OR_RETURN(CLIPTextConfig config, ReadCLIPTextConfig(component_dir));
  auto model = std::make_shared<Model>(config);
  RETURN_IF_ERROR(LoadTextEncoderWeights(*model, component_dir, placement,
                                         /*allow_unexpected=*/{kPositionIds}));
  return model;
}

}  // namespace

CLIPTextModel::CLIPTextModel(const CLIPTextConfig& config) : config_(config) {
  text_model_ = register_module("text_model", CLIPTextTransformer(config));
}

absl::StatusOr<CLIPTextOutput> CLIPTextModel::Forward(
    const at::Tensor& input_ids,
    const std::optional<at::Tensor>& attention_mask) {
  return RunTextTransformer(text_model_, config_, "CLIPTextModel", input_ids,
                            attention_mask);
}

CLIPTextModelWithProjection::CLIPTextModelWithProjection(
    const CLIPTextConfig& config)
    : config_(config) {
  text_model_ = register_module("text_model", CLIPTextTransformer(config));
  text_projection_ = register_module(
      "text_projection",
      Linear(torch::nn::LinearOptions(config.hidden_size, config.projection_dim)
                 .bias(false)));
}

absl::StatusOr<CLIPTextOutput> CLIPTextModelWithProjection::Forward(
    const at::Tensor& input_ids,
    const std::optional<at::Tensor>& attention_mask) {
  absl::StatusOr<CLIPTextOutput> out =
      RunTextTransformer(text_model_, config_, "CLIPTextModelWithProjection",
                         input_ids, attention_mask);
  if (!out.ok()) return out;
  RETURN_IF_ERROR(
      base::Guarded("CLIPTextModelWithProjection text_projection failed", [&] {
        torch::NoGradGuard no_grad;
        out->text_embeds = text_projection_->forward(out->pooler_output);
      }));
  return out;
}

absl::StatusOr<std::shared_ptr<CLIPTextModel>> LoadCLIPTextModel(
    const std::string& component_dir, const Placement& placement) {
  return LoadCLIP<CLIPTextModel>(component_dir, placement);
}

absl::StatusOr<std::shared_ptr<CLIPTextModelWithProjection>>
LoadCLIPTextModelWithProjection(const std::string& component_dir,
                                const Placement& placement) {
  return LoadCLIP<CLIPTextModelWithProjection>(component_dir, placement);
}

}  // namespace ditserve::models
