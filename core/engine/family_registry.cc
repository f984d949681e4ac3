#include "core/engine/family_registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
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

}  // namespace ditserve::engine
