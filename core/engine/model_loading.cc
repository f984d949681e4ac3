#include "core/engine/model_loading.h"

#include <torch/torch.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "core/engine/family_rank_program.h"
#include "core/engine/family_registry.h"
#include "core/engine/rank_memory.h"
#include "core/engine/transformer_setup.h"
#include "core/engine/write_checkpoint.h"
#include "core/families/flux/flux_defaults.h"
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
  absl::StatusOr<std::string> cached = engine::CachedCheckpoint(
      families::kFluxDevDefaults.name, checkpoints::CheckpointPreset::kTiny,
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

namespace {

absl::StatusOr<LoadedModel> LoadOwnShare(const RankSetup& setup,
                                         const RankRuntime& runtime) {
  const std::string& model_dir = setup.model_dir;
  const config::ModelSpec& spec = setup.spec;
  ASSIGN_OR_RETURN(const families::Family* family,
                   FamilyFor(spec.defaults.name));
  ASSIGN_OR_RETURN(TransformerSetup transformer,
                   SetUpTransformer(runtime, [&](int stage, int stages) {
                     return family->StageBlocks(model_dir, stage, stages);
                   }));
  families::LoadOptions options;
  options.attention = transformer.attention;
  options.placement = setup.compute.placement;
  options.blocks = transformer.blocks;
  ASSIGN_OR_RETURN(std::unique_ptr<families::FamilyModel> model,
                   family->Load(model_dir, options));
  LogStageWeights(runtime.env().rank, transformer.blocks, model->total_blocks(),
                  model->transformer());
  spdlog::info(
      "rank {} memory with its share of the model loaded: {}",
      runtime.env().rank,
      DescribeRankMemory(ReadRankMemory(setup.compute.placement.device)));
  LoadedModel loaded;
  loaded.spec = spec;
  loaded.model_dir = model_dir;
  loaded.dimensions = model->dimensions();
  loaded.placement = setup.compute.placement;
  loaded.program = std::make_unique<FamilyRankProgram>(
      std::move(model), transformer.stale_kv, setup.prompt_cache);
  return loaded;
}

}  // namespace

absl::StatusOr<LoadedModel> LoadModel(
    const RankSetup& setup, RankRuntime& runtime,
    std::function<absl::Status()> keep_waiting) {
  // A module allocates its weights from config.json before they are
  // compared with the checkpoint's, so a config with absurd sizes throws
  // (bad_alloc, c10::Error) here.
  absl::StatusOr<LoadedModel> loaded =
      base::Guarded(absl::StrCat("loading the model from ", setup.model_dir),
                    [&] { return LoadOwnShare(setup, runtime); });
  const dist::RankPhase phase{.key = "model_loaded",
                              .description = "loading the model",
                              .timeout = setup.rendezvous.load_timeout,
                              .timeout_flag = "--load_timeout_s",
                              .keep_waiting = std::move(keep_waiting)};
  RETURN_IF_ERROR(runtime.FinishPhase(phase, loaded.status()));
  return loaded;
}

}  // namespace ditserve::engine
