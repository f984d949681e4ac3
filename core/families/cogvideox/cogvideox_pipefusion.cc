#include "core/families/cogvideox/cogvideox_pipefusion.h"

#include <torch/torch.h>

#include <optional>

#include "core/base/status_macros.h"
#include "core/parallel/stage_rows.h"

namespace ditserve::families {
namespace {

// A CogVideoX stage for one forward's inputs; the attention sequence is
// [text | video].
class CogVideoXStageModel final : public parallel::StageModel {
 public:
  CogVideoXStageModel(CogVideoXTransformer3DModel& transformer,
                      const CogVideoXTransformerInputs& inputs,
                      const VideoTokenGrid& grid)
      : transformer_(transformer), inputs_(inputs), grid_(grid) {}

  int64_t batch() const override { return inputs_.hidden_states.size(0); }
  int64_t image_tokens() const override { return grid_.tokens(); }
  int64_t text_tokens() const override {
    return inputs_.encoder_hidden_states.size(1);
  }
  int64_t hidden_size() const override {
    return transformer_.config().inner_dim();
  }
  int64_t output_channels() const override {
    return transformer_.config().token_output_channels();
  }

  at::Tensor AttentionRows(const parallel::StagePatch& patch) const override {
    return parallel::TextFirstAttentionRows(text_tokens(), patch);
  }

  absl::StatusOr<parallel::StageStreams> Forward(
      const parallel::StagePatch& patch,
      const std::optional<parallel::StageStreams>& incoming) override {
    std::optional<CogVideoXStreams> streams;
    if (incoming.has_value()) {
      streams =
          CogVideoXStreams{.text = incoming->text, .video = incoming->image};
    }
    ASSIGN_OR_RETURN(
        CogVideoXStreams out,
        transformer_.ForwardStage(inputs_, patch.image, patch.text, streams));
    return parallel::StageStreams{.image = out.video, .text = out.text};
  }

  absl::StatusOr<at::Tensor> Output(const models::TokenSpan& /*patch*/,
                                    const at::Tensor& image) override {
    return transformer_.StageOutput(inputs_, image);
  }

 private:
  CogVideoXTransformer3DModel& transformer_;
  const CogVideoXTransformerInputs& inputs_;
  VideoTokenGrid grid_;
};

}  // namespace

absl::StatusOr<at::Tensor> CogVideoXStagedForward(
    CogVideoXTransformer3DModel& transformer,
    const CogVideoXTransformerInputs& inputs,
    const parallel::PipeFusionStages& stages, int step) {
  const at::Tensor& latents = inputs.hidden_states;
  ASSIGN_OR_RETURN(const VideoTokenGrid grid,
                   TokenGridOf(transformer.config(), latents.size(1),
                               latents.size(3), latents.size(4)));
  CogVideoXStageModel model(transformer, inputs, grid);
  ASSIGN_OR_RETURN(at::Tensor tokens,
                   parallel::StageForward(model, stages, step));
  return transformer.Unpatchify(tokens, grid);
}

}  // namespace ditserve::families
