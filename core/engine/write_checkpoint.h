#ifndef DITSERVE_CORE_ENGINE_WRITE_CHECKPOINT_H_
#define DITSERVE_CORE_ENGINE_WRITE_CHECKPOINT_H_

// A random checkpoint of any family, and a cache of them shared by the
// processes that start together on one machine (the built-in default model,
// the serving tests' models).

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/checkpoints/component_writer.h"
#include "core/config/model_defaults.h"

namespace ditserve::engine {

// The registered family's random checkpoint of `family` (a served model
// family: flux-dev, pixart-sigma, ...).
absl::Status WriteCheckpoint(config::ModelFamily family,
                             checkpoints::CheckpointPreset preset,
                             uint64_t seed, const std::string& out_dir);

// The folder `cache_dir`/<family>-<preset>-seed<seed>-v<N> holding
// WriteCheckpoint(family, preset, seed), where N changes whenever the
// writers' output does. Written when missing: beside the target, then
// renamed into place, so that processes starting together never load a
// half-written folder (the first rename wins; the other copies are
// identical). UNAVAILABLE when the cache folder cannot be created.
absl::StatusOr<std::string> CachedCheckpoint(
    config::ModelFamily family, checkpoints::CheckpointPreset preset,
    uint64_t seed, const std::string& cache_dir);

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_WRITE_CHECKPOINT_H_
