#include "core/families/flux/flux_transformer_loader.h"

#include <utility>

#include "core/base/status_macros.h"

namespace ditserve::models {

absl::StatusOr<std::shared_ptr<FluxTransformer2DModel>>
LoadFluxTransformer2DModel(const std::string& component_dir,
                           std::shared_ptr<Attention> attention,
                           const Placement& placement,
                           std::optional<BlockRange> blocks) {
  ASSIGN_OR_RETURN(FluxTransformerConfig config,
                   ReadFluxTransformerConfig(component_dir + "/config.json"));
  ASSIGN_OR_RETURN(std::shared_ptr<FluxTransformer2DModel> model,
                   FluxTransformer2DModel::Create(
                       config, std::move(attention),
                       blocks.value_or(BlockRange{0, config.total_blocks()})));
  return LoadHeldWeights(std::move(model), component_dir, placement);
}

}  // namespace ditserve::models
