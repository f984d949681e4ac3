#include "core/base/openmp_wait_policy.h"

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"

namespace ditserve::base {

std::string OpenMpWaitPolicy() {
  for (const char* variable : {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT"}) {
    if (const char* value = std::getenv(variable)) {
      return absl::StrCat("OpenMP workers wait with ", variable, "=", value);
    }
  }
  return "OpenMP workers spin briefly between parallel regions, then sleep "
         "(libgomp's default)";
}

}  // namespace ditserve::base
