#include "core/engine/cfg_model_loading.h"

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/base/status_macros.h"
#include "core/engine/pixart_rank_program.h"
#include "core/engine/sd3_rank_program.h"
#include "core/engine/transformer_setup.h"
#include "core/models/block_range.h"

namespace ditserve::engine {
namespace {

LoadedModel MakeLoadedModel(const std::string& model_dir,
                            const config::ModelSpec& spec,
                            const ModelDimensions& dimensions,
                            std::unique_ptr<RankProgram> program) {
  LoadedModel model;
  model.spec = spec;
  model.model_dir = model_dir;
  model.dimensions = dimensions;
  model.program = std::move(program);
  return model;
}

absl::StatusOr<LoadedModel> LoadPixArtModel(const std::string& model_dir,
                                            const config::ModelSpec& spec,
                                            const RankRuntime& runtime) {
  ASSIGN_OR_RETURN(
      TransformerSetup setup,
      SetUpTransformer(
          runtime,
          [&](int stage, int stages) -> absl::StatusOr<models::BlockRange> {
            ASSIGN_OR_RETURN(models::PixArtTransformerConfig config,
                             models::ReadPixArtTransformerConfig(
                                 model_dir + "/transformer/config.json"));
            // PixArt's blocks are alike: equal weights, equal counts.
            return models::SplitBlocksByWeight(
                std::vector<int64_t>(config.num_layers, 1), stage, stages);
          }));
  const models::Placement placement;
  ASSIGN_OR_RETURN(std::unique_ptr<pipelines::PixArtPromptEncoder> encoder,
                   pipelines::PixArtPromptEncoder::Load(model_dir, placement));
  ASSIGN_OR_RETURN(std::unique_ptr<pipelines::PixArtPipeline> pixart,
                   pipelines::PixArtPipeline::Load(model_dir, setup.attention,
                                                   placement, setup.blocks));
  models::PixArtTransformer2DModel& transformer = pixart->transformer();
  const models::PixArtTransformerConfig& config = transformer.config();
  LogStageWeights(runtime.env().rank, setup.blocks, config.num_layers,
                  transformer);
  const ModelDimensions dimensions{
      .hidden_size = static_cast<int>(config.inner_dim()),
      .transformer_out_channels = static_cast<int>(config.out_channels),
      .token_output_channels = static_cast<int>(config.token_output_channels()),
      .stages_pass_text_stream = false};
  return MakeLoadedModel(
      model_dir, spec, dimensions,
      std::make_unique<PixArtRankProgram>(std::move(encoder), std::move(pixart),
                                          setup.stale_kv));
}

absl::StatusOr<LoadedModel> LoadSD3Model(const std::string& model_dir,
                                         const config::ModelSpec& spec,
                                         const RankRuntime& runtime) {
  ASSIGN_OR_RETURN(
      TransformerSetup setup,
      SetUpTransformer(
          runtime,
          [&](int stage, int stages) -> absl::StatusOr<models::BlockRange> {
            ASSIGN_OR_RETURN(models::SD3TransformerConfig config,
                             models::ReadSD3TransformerConfig(
                                 model_dir + "/transformer/config.json"));
            return models::SD3Transformer2DModel::StageBlocks(config, stage,
                                                              stages);
          }));
  const models::Placement placement;
  ASSIGN_OR_RETURN(std::unique_ptr<pipelines::SD3Pipeline> sd3,
                   pipelines::SD3Pipeline::Load(model_dir, setup.attention,
                                                placement, setup.blocks));
  models::SD3Transformer2DModel& transformer = sd3->transformer();
  const models::SD3TransformerConfig& config = transformer.config();
  LogStageWeights(runtime.env().rank, setup.blocks, config.num_layers,
                  transformer);
  ASSIGN_OR_RETURN(std::unique_ptr<pipelines::SD3PromptEncoder> encoder,
                   pipelines::SD3PromptEncoder::Load(
                       model_dir, config.joint_attention_dim, placement));
  const ModelDimensions dimensions{
      .hidden_size = static_cast<int>(config.inner_dim()),
      .transformer_out_channels = static_cast<int>(config.out_channels),
      .token_output_channels =
          static_cast<int>(config.token_output_channels())};
  return MakeLoadedModel(
      model_dir, spec, dimensions,
      std::make_unique<SD3RankProgram>(std::move(encoder), std::move(sd3),
                                       setup.stale_kv));
}

}  // namespace

absl::StatusOr<LoadedModel> LoadCfgModel(const std::string& model_dir,
                                         const config::ModelSpec& spec,
                                         const RankRuntime& runtime) {
  if (spec.family == config::ModelFamily::kSd3Medium) {
    return LoadSD3Model(model_dir, spec, runtime);
  }
  return LoadPixArtModel(model_dir, spec, runtime);
}

}  // namespace ditserve::engine
