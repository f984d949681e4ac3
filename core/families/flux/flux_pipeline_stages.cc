#include "core/families/flux/flux_pipeline_stages.h"

#include <torch/torch.h>

#include <optional>

#include "core/base/status_macros.h"
#include "core/parallel/stage_rows.h"

namespace ditserve::families {
namespace {

// A FLUX stage for one forward's inputs: tokens [B, S, C] and their position
// ids narrow to a patch's; the joint sequence is [text, image].
class FluxStageModel final : public parallel::StageModel {
 public:
  FluxStageModel(models::FluxTransformer2DModel& transformer,
                 const models::FluxTransformerInputs& inputs)
      : transformer_(transformer), inputs_(inputs) {}

  int64_t batch() const override { return inputs_.hidden_states.size(0); }
  int64_t image_tokens() const override {
    return inputs_.hidden_states.size(1);
  }
  int64_t text_tokens() const override {
    return inputs_.encoder_hidden_states.size(1);
  }
  int64_t hidden_size() const override {
    return transformer_.config().inner_dim();
  }
  int64_t output_channels() const override {
    return transformer_.config().output_channels();
  }

  at::Tensor AttentionRows(const parallel::StagePatch& patch) const override {
    return parallel::TextFirstAttentionRows(text_tokens(), patch);
  }

  absl::StatusOr<parallel::StageStreams> Forward(
      const parallel::StagePatch& patch,
      const std::optional<parallel::StageStreams>& incoming) override {
    std::optional<models::FluxStreams> streams;
    if (incoming.has_value()) {
      streams =
          models::FluxStreams{.image = incoming->image, .text = incoming->text};
    }
    ASSIGN_OR_RETURN(models::FluxStreams out,
                     transformer_.ForwardStage(PatchInputs(patch), streams));
    return parallel::StageStreams{.image = out.image, .text = out.text};
  }

  absl::StatusOr<at::Tensor> Output(const models::TokenSpan& patch,
                                    const at::Tensor& image) override {
    return transformer_.StageOutput(PatchInputs({.image = patch, .text = true}),
                                    image);
  }

 private:
  models::FluxTransformerInputs PatchInputs(
      const parallel::StagePatch& patch) const {
    models::FluxTransformerInputs narrowed = inputs_;
    narrowed.hidden_states =
        inputs_.hidden_states.narrow(1, patch.image.begin, patch.image.tokens);
    narrowed.img_ids =
        inputs_.img_ids.narrow(0, patch.image.begin, patch.image.tokens);
    if (!patch.text) {
      narrowed.encoder_hidden_states =
          inputs_.encoder_hidden_states.narrow(1, 0, 0);
      narrowed.txt_ids = inputs_.txt_ids.narrow(0, 0, 0);
    }
    return narrowed;
  }

  models::FluxTransformer2DModel& transformer_;
  const models::FluxTransformerInputs& inputs_;
};

}  // namespace

absl::StatusOr<at::Tensor> FluxStageForward(
    models::FluxTransformer2DModel& transformer,
    const models::FluxTransformerInputs& inputs,
    const parallel::PipeFusionStages& stages, int step) {
  FluxStageModel model(transformer, inputs);
  return parallel::StageForward(model, stages, step);
}

}  // namespace ditserve::families
