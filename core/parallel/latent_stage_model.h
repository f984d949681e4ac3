#ifndef DITSERVE_CORE_PARALLEL_LATENT_STAGE_MODEL_H_
#define DITSERVE_CORE_PARALLEL_LATENT_STAGE_MODEL_H_

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "core/base/status_macros.h"
#include "core/models/sequence_shard.h"
#include "core/parallel/pipefusion.h"

namespace ditserve::parallel {

// What the StageModel of a transformer over latents [B, C, H, W] cut into
// patch_size x patch_size tokens (PixArt, SD3) shares. `Transformer` has
// config() with patch_size, inner_dim() and token_output_channels(),
// StageOutput(inputs, image stream) and Unpatchify(tokens, grid height, grid
// width); `Inputs` has hidden_states.
template <typename Transformer, typename Inputs>
class LatentStageModel : public StageModel {
 public:
  LatentStageModel(Transformer& transformer, const Inputs& inputs)
      : transformer_(transformer), inputs_(inputs) {}

  int64_t batch() const override { return inputs_.hidden_states.size(0); }
  int64_t image_tokens() const override { return grid_height() * grid_width(); }
  int64_t hidden_size() const override {
    return transformer_.config().inner_dim();
  }
  int64_t output_channels() const override {
    return transformer_.config().token_output_channels();
  }

  absl::StatusOr<at::Tensor> Output(const models::TokenSpan& /*patch*/,
                                    const at::Tensor& image) override {
    return transformer_.StageOutput(inputs_, image);
  }

  // The transformer's output [B, C, H, W] at denoising step `step`: the
  // whole sequence stage after stage in warm-up steps, the patch pipeline
  // after them (StageForward).
  absl::StatusOr<at::Tensor> Run(const PipeFusionStages& stages, int step) {
    ASSIGN_OR_RETURN(at::Tensor tokens, StageForward(*this, stages, step));
    return transformer_.Unpatchify(tokens, grid_height(), grid_width());
  }

 protected:
  Transformer& transformer() const { return transformer_; }
  const Inputs& inputs() const { return inputs_; }

 private:
  int64_t grid_height() const {
    return inputs_.hidden_states.size(2) / transformer_.config().patch_size;
  }
  int64_t grid_width() const {
    return inputs_.hidden_states.size(3) / transformer_.config().patch_size;
  }

  Transformer& transformer_;
  const Inputs& inputs_;
};

}  // namespace ditserve::parallel

#endif  // DITSERVE_CORE_PARALLEL_LATENT_STAGE_MODEL_H_
