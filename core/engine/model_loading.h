#ifndef DITSERVE_CORE_ENGINE_MODEL_LOADING_H_
#define DITSERVE_CORE_ENGINE_MODEL_LOADING_H_

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/config/model_spec.h"
#include "core/engine/buffer_plan.h"
#include "core/engine/rank_program.h"
#include "core/engine/rank_runtime.h"
#include "core/engine/rank_setup.h"
#include "core/engine/stage_timings.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::engine {

// A checkpoint loaded for one rank.
struct LoadedModel {
  config::ModelSpec spec;
  std::string model_dir;
  families::ModelDimensions dimensions;
  models::Placement placement;
  std::unique_ptr<RankProgram> program;
};

// `model_dir`, or the built-in default model when it is empty: a tiny
// FLUX.1-dev checkpoint with random weights that is written once into
// `cache_dir` (empty: $XDG_CACHE_HOME/ditserve, else ~/.cache/ditserve) and
// reused; concurrent ranks never see a half-written folder.
absl::StatusOr<std::string> ResolveModelDir(const std::string& model_dir,
                                            const std::string& cache_dir);

// Loads what this rank of `runtime`'s mesh runs from `setup`'s checkpoint
// folder, on its compute target: the registered family that serves
// spec.defaults.name.
// The transformer attends through the mesh's Attention (Ulysses, Ring or
// both when sp = ring × ulysses > 1); a PipeFusion stage loads only its
// blocks (TransformerSetup). Logs the memory each component maps.
// Then waits until every rank of `runtime`'s generation loaded its share
// (RankRuntime::FinishPhase, bounded by --load_timeout_s, and by
// `keep_waiting` when given), so that the first request waits for no rank:
// errors are this rank's own, UNAVAILABLE naming the rank that failed, died
// or is too slow, or keep_waiting's.
absl::StatusOr<LoadedModel> LoadModel(
    const RankSetup& setup, RankRuntime& runtime,
    std::function<absl::Status()> keep_waiting = nullptr);

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_MODEL_LOADING_H_
