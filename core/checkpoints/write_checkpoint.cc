#include "core/checkpoints/write_checkpoint.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "core/checkpoints/flux_checkpoint.h"
#include "core/checkpoints/pixart_checkpoint.h"
#include "core/checkpoints/sd3_checkpoint.h"

namespace ditserve::checkpoints {
namespace {

// Bump when any writer's output changes, so caches refresh.
constexpr int kCheckpointFormatVersion = 1;

}  // namespace

absl::Status WriteCheckpoint(config::ModelFamily family,
                             CheckpointPreset preset, uint64_t seed,
                             const std::string& out_dir) {
  switch (family) {
    case config::ModelFamily::kFluxDev:
    case config::ModelFamily::kFluxSchnell:
      return WriteFluxCheckpoint(family, preset, seed, out_dir);
    case config::ModelFamily::kPixArtAlpha:
    case config::ModelFamily::kPixArtSigma:
      return WritePixArtCheckpoint(family, preset, seed, out_dir);
    case config::ModelFamily::kSd3Medium:
      return WriteSD3Checkpoint(preset, seed, out_dir);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown model family ", static_cast<int>(family)));
}

absl::StatusOr<std::string> CachedCheckpoint(config::ModelFamily family,
                                             CheckpointPreset preset,
                                             uint64_t seed,
                                             const std::string& cache_dir) {
  const std::filesystem::path cache(cache_dir);
  const std::string name = absl::StrCat(config::ModelFamilyName(family), "-",
                                        CheckpointPresetName(preset), "-seed",
                                        seed, "-v", kCheckpointFormatVersion);
  const std::filesystem::path target = cache / name;
  if (std::filesystem::exists(target / "model_index.json")) {
    return target.string();
  }
  std::error_code error;
  std::filesystem::create_directories(cache, error);
  if (error) {
    return absl::UnavailableError(absl::StrCat("cannot create the model cache ",
                                               cache.string(), ": ",
                                               error.message()));
  }
  const std::filesystem::path staging =
      cache / absl::StrCat(name, ".tmp-", ::getpid());
  std::filesystem::remove_all(staging, error);
  if (absl::Status s = WriteCheckpoint(family, preset, seed, staging.string());
      !s.ok()) {
    std::filesystem::remove_all(staging, error);
    return s;
  }
  std::filesystem::rename(staging, target, error);
  if (error) {
    // Another process finished first; its folder is identical.
    std::filesystem::remove_all(staging, error);
    if (!std::filesystem::exists(target / "model_index.json")) {
      return absl::UnavailableError(
          absl::StrCat("cannot move the checkpoint into ", target.string()));
    }
  }
  return target.string();
}

}  // namespace ditserve::checkpoints
