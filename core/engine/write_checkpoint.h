#ifndef DITSERVE_CORE_ENGINE_WRITE_CHECKPOINT_H_
#define DITSERVE_CORE_ENGINE_WRITE_CHECKPOINT_H_

// A random checkpoint of any family, and a cache of them shared by the
// processes that start together on one machine (the built-in default model,
// the serving tests' models).

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/checkpoints/component_writer.h"

namespace ditserve::engine {

// The registered family's random checkpoint of the served model `model`
// (flux-dev, pixart-sigma, ...); NOT_FOUND naming the served ones otherwise.
absl::Status WriteCheckpoint(absl::string_view model,
                             checkpoints::CheckpointPreset preset,
                             uint64_t seed, const std::string& out_dir);

// The folder `cache_dir`/<model>-<preset>-seed<seed>-v<N> holding
// WriteCheckpoint(model, preset, seed), where N changes whenever the
// writers' output does. Written when missing: beside the target, then
// renamed into place, so that processes starting together never load a
// half-written folder (the first rename wins; the other copies are
// identical). UNAVAILABLE when the cache folder cannot be created.
absl::StatusOr<std::string> CachedCheckpoint(
    absl::string_view model, checkpoints::CheckpointPreset preset,
    uint64_t seed, const std::string& cache_dir);

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_WRITE_CHECKPOINT_H_
