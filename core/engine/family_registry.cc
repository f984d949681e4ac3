#include "core/engine/family_registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/status_macros.h"
#include "core/families/flux/flux_family.h"
#include "core/families/pixart/pixart_family.h"
#include "core/families/sd3/sd3_family.h"

namespace ditserve::engine {

const std::vector<const families::Family*>& RegisteredFamilies() {
  // One line per family.
  static const std::vector<const families::Family*>* const registered =
      new std::vector<const families::Family*>{
          &families::FluxFamily(),
          &families::PixArtFamily(),
          &families::SD3Family(),
      };
  return *registered;
}

absl::StatusOr<const families::Family*> FamilyFor(config::ModelFamily family) {
  for (const families::Family* registered : RegisteredFamilies()) {
    const std::vector<config::ModelFamily> served = registered->serves();
    if (std::find(served.begin(), served.end(), family) != served.end()) {
      return registered;
    }
  }
  return absl::NotFoundError(
      absl::StrCat("no registered family serves model family ",
                   config::ModelFamilyName(family)));
}

absl::StatusOr<config::ModelSpec> ReadModelSpec(const std::string& model_dir) {
  ASSIGN_OR_RETURN(config::CheckpointConfigs configs,
                   config::ReadCheckpointConfigs(model_dir));
  std::vector<std::string> served;
  for (const families::Family* family : RegisteredFamilies()) {
    for (const std::string& pipeline_class : family->pipeline_classes()) {
      if (pipeline_class == configs.pipeline_class) {
        return family->Detect(configs);
      }
      served.push_back(pipeline_class);
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      model_dir, "/model_index.json: pipeline \"", configs.pipeline_class,
      "\" is not served; known: ", absl::StrJoin(served, ", ")));
}

}  // namespace ditserve::engine
