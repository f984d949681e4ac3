#include "core/engine/build_version.h"

namespace ditserve::engine {

const char* BuildVersion() { return DITSERVE_VERSION; }

}  // namespace ditserve::engine
