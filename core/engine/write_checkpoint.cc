#include "core/engine/write_checkpoint.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/engine/family_registry.h"

namespace ditserve::engine {
namespace {

// Bump when any writer's output changes, so caches refresh.
constexpr int kCheckpointFormatVersion = 1;

}  // namespace

absl::Status WriteCheckpoint(absl::string_view model,
                             checkpoints::CheckpointPreset preset,
                             uint64_t seed, const std::string& out_dir) {
  ASSIGN_OR_RETURN(const families::Family* family, FamilyFor(model));
  ASSIGN_OR_RETURN(config::ModelDefaults defaults, DefaultsFor(model));
  return family->WriteRandomCheckpoint(defaults, preset, seed, out_dir);
}

absl::StatusOr<std::string> CachedCheckpoint(
    absl::string_view model, checkpoints::CheckpointPreset preset,
    uint64_t seed, const std::string& cache_dir) {
  const std::filesystem::path cache(cache_dir);
  const std::string name =
      absl::StrCat(model, "-", checkpoints::CheckpointPresetName(preset),
                   "-seed", seed, "-v", kCheckpointFormatVersion);
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
  if (absl::Status s = WriteCheckpoint(model, preset, seed, staging.string());
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

}  // namespace ditserve::engine
