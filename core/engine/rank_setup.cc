#include "core/engine/rank_setup.h"

#include <memory>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/config/parallel_config.h"
#include "core/engine/family_registry.h"
#include "core/engine/model_loading.h"
#include "core/engine/rank_flags.h"
#include "core/engine/startup_facts.h"

namespace ditserve::engine {
namespace {

// `status` with `what` in front of its message.
absl::Status Prefixed(const absl::Status& status, absl::string_view what) {
  return absl::Status(status.code(),
                      absl::StrCat(what, ": ", status.message()));
}

}  // namespace

absl::StatusOr<RankSetup> RankSetupFromFlags(const dist::RankEnv& env) {
  RankSetup setup;
  absl::StatusOr<v1::ParallelConfig> parallel =
      config::MakeParallelConfig(ParallelFlagsFromFlags(), env.world_size);
  if (!parallel.ok()) return Prefixed(parallel.status(), "parallel flags");
  setup.parallel = *std::move(parallel);
  // Every flag before the model: without --model_dir the built-in model is
  // written first, and a bad flag must not wait for that (nor write it).
  absl::StatusOr<ComputeTarget> compute = ComputeTargetFromFlags(env);
  if (!compute.ok()) return Prefixed(compute.status(), "rank flags");
  setup.compute = *std::move(compute);
  RETURN_IF_ERROR(MakeDeviceCurrent(setup.compute));
  absl::StatusOr<dist::RendezvousOptions> rendezvous =
      RendezvousOptionsFromFlags();
  if (!rendezvous.ok()) return Prefixed(rendezvous.status(), "rank flags");
  setup.rendezvous = *std::move(rendezvous);
  setup.rendezvous.nccl_data_group = setup.compute.placement.device.is_cuda();
  absl::StatusOr<int64_t> prompt_cache_bytes = PromptCacheBytesFromFlags();
  if (!prompt_cache_bytes.ok()) {
    return Prefixed(prompt_cache_bytes.status(), "rank flags");
  }
  setup.prompt_cache =
      std::make_shared<PromptEmbeddingCache>(*prompt_cache_bytes);
  if (absl::Status limited = LimitDeviceMemoryFromFlags(setup.compute);
      !limited.ok()) {
    // Only a bad value is the flags'; CUDA's own failure names the GPU.
    return absl::IsInvalidArgument(limited) ? Prefixed(limited, "rank flags")
                                            : limited;
  }
  absl::StatusOr<std::string> model_dir = ResolveModelDir(
      absl::GetFlag(FLAGS_model_dir), absl::GetFlag(FLAGS_model_cache_dir));
  if (!model_dir.ok()) return Prefixed(model_dir.status(), "model");
  setup.model_dir = *std::move(model_dir);
  absl::StatusOr<config::ModelSpec> spec = ReadModelSpec(setup.model_dir);
  if (!spec.ok()) return Prefixed(spec.status(), "model");
  setup.spec = *std::move(spec);
  if (absl::Status s =
          config::ValidateParallelForModel(setup.parallel, setup.spec);
      !s.ok()) {
    return Prefixed(s, "parallel flags");
  }
  return setup;
}

absl::StatusOr<std::unique_ptr<RankRuntime>> JoinGroup(
    const RankSetup& setup, std::shared_ptr<dist::GroupStore> store,
    int64_t generation, std::function<absl::Status()> keep_waiting) {
  absl::StatusOr<v1::StartupFacts> facts =
      DescribeStartup(setup.parallel, setup.rendezvous.collective_timeout,
                      setup.spec, setup.model_dir, setup.compute);
  if (!facts.ok()) return Prefixed(facts.status(), "model");
  return RankRuntime::Join(std::move(store), generation, setup.parallel,
                           setup.rendezvous, *facts, std::move(keep_waiting));
}

}  // namespace ditserve::engine
