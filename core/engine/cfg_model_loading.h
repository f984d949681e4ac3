#ifndef DITSERVE_CORE_ENGINE_CFG_MODEL_LOADING_H_
#define DITSERVE_CORE_ENGINE_CFG_MODEL_LOADING_H_

// Loading of the families served with classifier-free guidance (PixArt-α/Σ,
// SD3), which run with data, CFG and sequence parallelism.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/config/model_spec.h"
#include "core/engine/model_loading.h"

namespace ditserve::engine {

// As LoadModel, for a pixart-alpha, pixart-sigma or sd3-medium checkpoint.
absl::StatusOr<LoadedModel> LoadCfgModel(const std::string& model_dir,
                                         const config::ModelSpec& spec,
                                         const RankRuntime& runtime);

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_CFG_MODEL_LOADING_H_
