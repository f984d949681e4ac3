#ifndef DITSERVE_CORE_ENGINE_FAMILY_REGISTRY_H_
#define DITSERVE_CORE_ENGINE_FAMILY_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/config/model_defaults.h"
#include "core/families/family.h"

namespace ditserve::engine {

// Every registered family, in registration order.
const std::vector<const families::Family*>& RegisteredFamilies();

// The defaults rows of every served model, family by family.
std::vector<config::ModelDefaults> ServedModels();

// The family that serves the model named `model` ("flux-dev", ...); NOT_FOUND
// naming the served models otherwise.
absl::StatusOr<const families::Family*> FamilyFor(absl::string_view model);

// The defaults row of the model named `model`; NOT_FOUND as FamilyFor.
absl::StatusOr<config::ModelDefaults> DefaultsFor(absl::string_view model);

// The spec of the diffusers checkpoint folder `model_dir`, by the registered
// family that runs its pipeline class (INVALID_ARGUMENT naming the class and
// the served ones otherwise). Errors name the file and key.
absl::StatusOr<config::ModelSpec> ReadModelSpec(const std::string& model_dir);

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_FAMILY_REGISTRY_H_
