#ifndef DITSERVE_CORE_ENGINE_COMPUTE_TARGET_H_
#define DITSERVE_CORE_ENGINE_COMPUTE_TARGET_H_

namespace ditserve::engine {

// Where and in which dtype the ranks compute, as GetServerInfo,
// ditserve_build_info and the start-up agreement report it. Every build
// computes in float32 on the CPU today.
struct ComputeTarget {
  const char* device;
  const char* dtype;
};

inline constexpr ComputeTarget kComputeTarget{"cpu", "float32"};

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_COMPUTE_TARGET_H_
