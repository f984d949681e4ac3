#include "core/engine/model_loading.h"

#include <torch/torch.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/checkpoints/write_checkpoint.h"
#include "core/config/model_defaults.h"
#include "core/engine/cfg_model_loading.h"
#include "core/engine/flux_rank_program.h"
#include "core/engine/transformer_setup.h"
#include "core/models/flux/flux_transformer_config.h"
#include "spdlog/spdlog.h"

namespace ditserve::engine {
namespace {

constexpr uint64_t kDefaultModelSeed = 0;

std::filesystem::path DefaultCacheDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return std::filesystem::path(xdg) / "ditserve";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::filesystem::path(home) / ".cache" / "ditserve";
  }
  return std::filesystem::temp_directory_path() / "ditserve-cache";
}

}  // namespace

absl::StatusOr<std::string> ResolveModelDir(const std::string& model_dir,
                                            const std::string& cache_dir) {
  if (!model_dir.empty()) return model_dir;
  const std::string cache =
      cache_dir.empty() ? DefaultCacheDir().string() : cache_dir;
  absl::StatusOr<std::string> cached = checkpoints::CachedCheckpoint(
      config::ModelFamily::kFluxDev, checkpoints::CheckpointPreset::kTiny,
      kDefaultModelSeed, cache);
  if (!cached.ok()) {
    return absl::Status(
        cached.status().code(),
        absl::StrCat(cached.status().message(),
                     " (set --model_cache_dir or --model_dir)"));
  }
  spdlog::info(
      "serving the built-in default model (tiny FLUX.1-dev, random weights) "
      "from {}",
      *cached);
  return cached;
}

absl::StatusOr<LoadedModel> LoadModel(const std::string& model_dir,
                                      const config::ModelSpec& spec,
                                      const RankRuntime& runtime) {
  const int rank = runtime.env().rank;
  switch (spec.family) {
    case config::ModelFamily::kPixArtAlpha:
    case config::ModelFamily::kPixArtSigma:
    case config::ModelFamily::kSd3Medium:
      return LoadCfgModel(model_dir, spec, runtime);
    case config::ModelFamily::kFluxDev:
    case config::ModelFamily::kFluxSchnell:
      break;
  }
  ASSIGN_OR_RETURN(
      TransformerSetup setup,
      SetUpTransformer(
          runtime,
          [&](int stage, int stages) -> absl::StatusOr<models::BlockRange> {
            ASSIGN_OR_RETURN(models::FluxTransformerConfig config,
                             models::ReadFluxTransformerConfig(
                                 model_dir + "/transformer/config.json"));
            return models::FluxStageBlocks(config, stage, stages);
          }));

  const models::Placement placement;
  ASSIGN_OR_RETURN(std::unique_ptr<pipelines::FluxPromptEncoder> encoder,
                   pipelines::FluxPromptEncoder::Load(model_dir, placement));
  ASSIGN_OR_RETURN(std::unique_ptr<pipelines::FluxPipeline> flux,
                   pipelines::FluxPipeline::Load(model_dir, setup.attention,
                                                 placement, setup.blocks));
  const models::FluxTransformerConfig& config = flux->transformer().config();
  LogStageWeights(rank, setup.blocks, config.total_blocks(),
                  flux->transformer());

  LoadedModel model;
  model.spec = spec;
  model.model_dir = model_dir;
  model.dimensions.hidden_size = static_cast<int>(config.inner_dim());
  model.dimensions.token_output_channels =
      static_cast<int>(config.output_channels());
  model.program = std::make_unique<FluxRankProgram>(
      std::move(encoder), std::move(flux), setup.stale_kv);
  return model;
}

}  // namespace ditserve::engine
