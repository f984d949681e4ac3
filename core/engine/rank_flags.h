#ifndef DITSERVE_CORE_ENGINE_RANK_FLAGS_H_
#define DITSERVE_CORE_ENGINE_RANK_FLAGS_H_

// Flags every rank takes (ditserve-host and ditserve-worker alike): the
// parallel degrees must be the same on every rank.

#include <cstdint>
#include <string>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "absl/types/optional.h"
#include "core/config/parallel_config.h"
#include "core/dist/rank_env.h"
#include "core/dist/rendezvous.h"
#include "core/engine/compute_target.h"

ABSL_DECLARE_FLAG(std::string, model_dir);
ABSL_DECLARE_FLAG(std::string, model_cache_dir);
ABSL_DECLARE_FLAG(int, threads);
ABSL_DECLARE_FLAG(absl::optional<int>, dp_degree);
ABSL_DECLARE_FLAG(int, cfg_degree);
ABSL_DECLARE_FLAG(int, pipefusion_degree);
ABSL_DECLARE_FLAG(int, ring_degree);
ABSL_DECLARE_FLAG(int, ulysses_degree);
ABSL_DECLARE_FLAG(int, num_pipeline_patch);
ABSL_DECLARE_FLAG(int, warmup_steps);
ABSL_DECLARE_FLAG(absl::optional<int>, rank);
ABSL_DECLARE_FLAG(absl::optional<int>, world_size);
ABSL_DECLARE_FLAG(absl::optional<int>, local_rank);
ABSL_DECLARE_FLAG(absl::optional<std::string>, master_addr);
ABSL_DECLARE_FLAG(absl::optional<int>, master_port);
ABSL_DECLARE_FLAG(double, connect_timeout_s);
ABSL_DECLARE_FLAG(double, collective_timeout_s);
ABSL_DECLARE_FLAG(double, hung_rank_timeout_s);
ABSL_DECLARE_FLAG(double, ping_interval_s);
ABSL_DECLARE_FLAG(std::string, log_format);
ABSL_DECLARE_FLAG(std::string, device);
ABSL_DECLARE_FLAG(std::string, dtype);
ABSL_DECLARE_FLAG(double, cuda_memory_fraction);
ABSL_DECLARE_FLAG(int, prompt_cache_mb);

namespace ditserve::engine {

config::ParallelFlags ParallelFlagsFromFlags();
dist::RankEnvOverrides RankEnvOverridesFromFlags();
// INVALID_ARGUMENT naming the flag when --hung_rank_timeout_s is below two
// heartbeat intervals.
absl::StatusOr<dist::RendezvousOptions> RendezvousOptionsFromFlags();
// --device and --dtype (ParseComputeTarget), the GPU being LOCAL_RANK's.
absl::StatusOr<ComputeTarget> ComputeTargetFromFlags(const dist::RankEnv& env);
// --cuda_memory_fraction on the GPU of `target` (LimitDeviceMemory).
absl::Status LimitDeviceMemoryFromFlags(const ComputeTarget& target);

// --prompt_cache_mb in bytes; INVALID_ARGUMENT naming the flag when negative.
absl::StatusOr<int64_t> PromptCacheBytesFromFlags();

// --threads, or the machine's cores divided by the ranks on this machine
// (LOCAL_WORLD_SIZE when set, else the world size), at least 1.
int IntraOpThreads(const dist::RankEnv& env);

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_RANK_FLAGS_H_
