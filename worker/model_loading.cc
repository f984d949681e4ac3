#include "worker/model_loading.h"

#include <cstdlib>
#include <filesystem>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/config/model_defaults.h"
#include "core/dist/mesh.h"
#include "core/engine/flux_rank_pipeline.h"
#include "core/parallel/make_attention.h"
#include "spdlog/spdlog.h"
#include "tools/make_checkpoint/write_checkpoint.h"
#include "worker/guided_model_loading.h"

namespace ditserve::worker {
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

// Degrees the FLUX rank pipeline runs today: data parallel and sequence
// parallel (Ulysses, Ring, both). CFG parallel never applies to FLUX.1
// (config::ValidateParallelForModel refuses it first).
absl::Status CheckSupportedParallelism(const dist::Mesh& mesh) {
  for (const auto& [axis, flag] :
       {std::pair{dist::Axis::kCfg, "--cfg_degree"},
        std::pair{dist::Axis::kPp, "--pipefusion_degree"}}) {
    if (mesh.Degree(axis) > 1) {
      return absl::UnimplementedError(absl::StrCat(
          flag, " ", mesh.Degree(axis),
          ": this build runs FLUX with data parallelism (--dp_degree) and "
          "sequence parallelism (--ulysses_degree, --ring_degree) only; the "
          "other parallel methods are not implemented yet"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ResolveModelDir(const std::string& model_dir,
                                            const std::string& cache_dir) {
  if (!model_dir.empty()) return model_dir;
  const std::string cache =
      cache_dir.empty() ? DefaultCacheDir().string() : cache_dir;
  absl::StatusOr<std::string> cached = tools::CachedCheckpoint(
      config::ModelFamily::kFluxDev, tools::CheckpointPreset::kTiny,
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
  const dist::Mesh& mesh = runtime.mesh();
  const int rank = runtime.env().rank;
  switch (spec.family) {
    case config::ModelFamily::kPixArtAlpha:
    case config::ModelFamily::kPixArtSigma:
    case config::ModelFamily::kSd3Medium:
      return LoadGuidedModel(model_dir, spec, mesh, rank);
    case config::ModelFamily::kFluxDev:
    case config::ModelFamily::kFluxSchnell:
      break;
  }
  if (absl::Status s = CheckSupportedParallelism(mesh); !s.ok()) return s;

  const models::Placement placement;
  absl::StatusOr<std::unique_ptr<pipelines::FluxPromptEncoder>> encoder =
      pipelines::FluxPromptEncoder::Load(model_dir, placement);
  if (!encoder.ok()) return encoder.status();
  absl::StatusOr<std::unique_ptr<pipelines::FluxPipeline>> flux =
      pipelines::FluxPipeline::Load(
          model_dir,
          parallel::MakeAttention(mesh, runtime.groups(),
                                  runtime.sequence_parallel_options()),
          placement);
  if (!flux.ok()) return flux.status();

  LoadedModel model;
  model.spec = spec;
  model.model_dir = model_dir;
  model.dimensions.hidden_size =
      static_cast<int>((*flux)->transformer().config().inner_dim());
  auto pipeline = std::make_unique<engine::FluxRankPipeline>(
      *std::move(encoder), *std::move(flux));
  if (rank == 0) {
    engine::FluxRankPipeline* decoder = pipeline.get();
    model.decode = [decoder](const v1::InputConfig& config,
                             const at::Tensor& latents,
                             engine::StageTimings& timings) {
      return decoder->Decode(config, latents, timings);
    };
  }
  model.pipeline = std::move(pipeline);
  return model;
}

}  // namespace ditserve::worker
