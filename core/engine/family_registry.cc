#include "core/engine/family_registry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/status_macros.h"
#include "core/families/cogvideox/cogvideox_family.h"
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
          &families::CogVideoXFamily(),
      };
  return *registered;
}

std::vector<config::ModelDefaults> ServedModels() {
  std::vector<config::ModelDefaults> served;
  for (const families::Family* family : RegisteredFamilies()) {
    for (const config::ModelDefaults& row : family->serves()) {
      served.push_back(row);
    }
  }
  return served;
}

namespace {

struct ServedModel {
  const families::Family* family;
  config::ModelDefaults defaults;
};

absl::StatusOr<ServedModel> FindServedModel(absl::string_view model) {
  std::vector<absl::string_view> known;
  for (const families::Family* family : RegisteredFamilies()) {
    for (const config::ModelDefaults& row : family->serves()) {
      if (row.name == model) return ServedModel{family, row};
      known.push_back(row.name);
    }
  }
  return absl::NotFoundError(
      absl::StrCat("model \"", model,
                   "\" is not served; known: ", absl::StrJoin(known, ", ")));
}

}  // namespace

absl::StatusOr<const families::Family*> FamilyFor(absl::string_view model) {
  ASSIGN_OR_RETURN(ServedModel served, FindServedModel(model));
  return served.family;
}

absl::StatusOr<config::ModelDefaults> DefaultsFor(absl::string_view model) {
  ASSIGN_OR_RETURN(ServedModel served, FindServedModel(model));
  return served.defaults;
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
