#ifndef DITSERVE_CORE_ENGINE_BUILD_VERSION_H_
#define DITSERVE_CORE_ENGINE_BUILD_VERSION_H_

namespace ditserve::engine {

// ditserve's version, from project() in the top-level CMakeLists.txt.
const char* BuildVersion();

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_BUILD_VERSION_H_
