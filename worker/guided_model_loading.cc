#include "worker/guided_model_loading.h"

#include <memory>
#include <utility>

#include "core/engine/pixart_rank_pipeline.h"
#include "core/engine/sd3_rank_pipeline.h"
#include "core/parallel/make_attention.h"

namespace ditserve::worker {
namespace {

// `pipeline` as rank `rank`'s model, decoding on rank 0.
template <typename RankPipeline>
LoadedModel MakeLoadedModel(const std::string& model_dir,
                            const config::ModelSpec& spec,
                            const engine::ModelDimensions& dimensions,
                            std::unique_ptr<RankPipeline> pipeline, int rank) {
  LoadedModel model;
  model.spec = spec;
  model.model_dir = model_dir;
  model.dimensions = dimensions;
  if (rank == 0) {
    RankPipeline* decoder = pipeline.get();
    model.decode = [decoder](const v1::InputConfig& config,
                             const at::Tensor& latents,
                             engine::StageTimings& timings) {
      return decoder->Decode(config, latents, timings);
    };
  }
  model.pipeline = std::move(pipeline);
  return model;
}

// The attention of every transformer layer: local on one rank, else over
// the rank's ring / Ulysses groups.
std::shared_ptr<parallel::Attention> AttentionOf(const RankRuntime& runtime) {
  return parallel::MakeAttention(runtime.mesh(), runtime.groups(),
                                 runtime.sequence_parallel_options());
}

absl::StatusOr<LoadedModel> LoadPixArtModel(const std::string& model_dir,
                                            const config::ModelSpec& spec,
                                            const RankRuntime& runtime) {
  const models::Placement placement;
  absl::StatusOr<std::unique_ptr<pipelines::PixArtPromptEncoder>> encoder =
      pipelines::PixArtPromptEncoder::Load(model_dir, placement);
  if (!encoder.ok()) return encoder.status();
  absl::StatusOr<std::unique_ptr<pipelines::PixArtPipeline>> pixart =
      pipelines::PixArtPipeline::Load(model_dir, AttentionOf(runtime),
                                      placement);
  if (!pixart.ok()) return pixart.status();
  const models::PixArtTransformerConfig& transformer =
      (*pixart)->transformer().config();
  const engine::ModelDimensions dimensions{
      .hidden_size = static_cast<int>(transformer.inner_dim()),
      .transformer_out_channels = static_cast<int>(transformer.out_channels)};
  return MakeLoadedModel(model_dir, spec, dimensions,
                         std::make_unique<engine::PixArtRankPipeline>(
                             *std::move(encoder), *std::move(pixart)),
                         runtime.env().rank);
}

absl::StatusOr<LoadedModel> LoadSD3Model(const std::string& model_dir,
                                         const config::ModelSpec& spec,
                                         const RankRuntime& runtime) {
  const models::Placement placement;
  absl::StatusOr<std::unique_ptr<pipelines::SD3Pipeline>> sd3 =
      pipelines::SD3Pipeline::Load(model_dir, AttentionOf(runtime), placement);
  if (!sd3.ok()) return sd3.status();
  const models::SD3TransformerConfig& transformer =
      (*sd3)->transformer().config();
  absl::StatusOr<std::unique_ptr<pipelines::SD3PromptEncoder>> encoder =
      pipelines::SD3PromptEncoder::Load(
          model_dir, transformer.joint_attention_dim, placement);
  if (!encoder.ok()) return encoder.status();
  const engine::ModelDimensions dimensions{
      .hidden_size = static_cast<int>(transformer.inner_dim()),
      .transformer_out_channels = static_cast<int>(transformer.out_channels)};
  return MakeLoadedModel(model_dir, spec, dimensions,
                         std::make_unique<engine::SD3RankPipeline>(
                             *std::move(encoder), *std::move(sd3)),
                         runtime.env().rank);
}

}  // namespace

absl::StatusOr<LoadedModel> LoadGuidedModel(const std::string& model_dir,
                                            const config::ModelSpec& spec,
                                            const RankRuntime& runtime) {
  if (spec.family == config::ModelFamily::kSd3Medium) {
    return LoadSD3Model(model_dir, spec, runtime);
  }
  return LoadPixArtModel(model_dir, spec, runtime);
}

}  // namespace ditserve::worker
