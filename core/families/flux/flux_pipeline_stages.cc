#include "core/families/flux/flux_pipeline_stages.h"

#include <torch/torch.h>

#include <optional>

#include "core/base/status_macros.h"
#include "core/parallel/stage_rows.h"

namespace ditserve::families {
namespace {

// A FLUX stage for one forward's inputs: tokens [B, S_img, C] and their
// position ids narrow to a patch; the joint sequence is [text, image].
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

  at::Tensor AttentionRows(const models::TokenSpan& patch) const override {
    return parallel::TextFirstAttentionRows(text_tokens(), patch);
  }

  absl::StatusOr<parallel::StageStreams> Forward(
      const models::TokenSpan& patch,
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
    return transformer_.StageOutput(PatchInputs(patch), image);
  }

 private:
  models::FluxTransformerInputs PatchInputs(
      const models::TokenSpan& patch) const {
    models::FluxTransformerInputs narrowed = inputs_;
    narrowed.hidden_states =
        inputs_.hidden_states.narrow(1, patch.begin, patch.tokens);
    narrowed.img_ids = inputs_.img_ids.narrow(0, patch.begin, patch.tokens);
    return narrowed;
  }

  models::FluxTransformer2DModel& transformer_;
  const models::FluxTransformerInputs& inputs_;
};

}  // namespace

absl::StatusOr<at::Tensor> StagedFluxForward(
    models::FluxTransformer2DModel& transformer,
    const models::FluxTransformerInputs& inputs,
    const parallel::PipeFusionStages& stages) {
  FluxStageModel model(transformer, inputs);
  return parallel::StagedForward(model, stages);
}

absl::StatusOr<at::Tensor> PatchedFluxForward(
    models::FluxTransformer2DModel& transformer,
    const models::FluxTransformerInputs& inputs,
    const parallel::PipeFusionStages& stages) {
  FluxStageModel model(transformer, inputs);
  return parallel::PatchedForward(model, stages);
}

}  // namespace ditserve::families
