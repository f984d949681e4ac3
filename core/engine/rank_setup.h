#ifndef DITSERVE_CORE_ENGINE_RANK_SETUP_H_
#define DITSERVE_CORE_ENGINE_RANK_SETUP_H_

// The start-up every rank shares, ditserve-host and ditserve-worker alike:
// what it reads from its flags and checkpoint, then joining the group.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/config/model_spec.h"
#include "core/dist/group_store.h"
#include "core/dist/rank_env.h"
#include "core/dist/rendezvous.h"
#include "core/engine/compute_target.h"
#include "core/engine/prompt_embedding_cache.h"
#include "core/engine/rank_runtime.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::engine {

// What a rank knows before it joins the group.
struct RankSetup {
  v1::ParallelConfig parallel;
  // The checkpoint folder (the built-in default model when --model_dir is
  // empty) and its spec.
  std::string model_dir;
  config::ModelSpec spec;
  ComputeTarget compute;
  dist::RendezvousOptions rendezvous;
  // Kept for the process's life, so that it survives a re-formed group.
  std::shared_ptr<PromptEmbeddingCache> prompt_cache;
};

// Reads the rank flags and the checkpoint's spec, and checks the degrees
// against the model, all before any network wait so that a bad flag fails
// in seconds. Errors start with what failed ("parallel flags: ...",
// "model: ...", "rank flags: ...").
absl::StatusOr<RankSetup> RankSetupFromFlags(const dist::RankEnv& env);

// Describes this rank's start-up facts and joins `generation` of the group
// in `store`, which fails on every rank when any rank's facts differ
// (RankRuntime::Join; `keep_waiting` may end the wait for the others).
absl::StatusOr<std::unique_ptr<RankRuntime>> JoinGroup(
    const RankSetup& setup, std::shared_ptr<dist::GroupStore> store,
    int64_t generation, std::function<absl::Status()> keep_waiting = nullptr);

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_RANK_SETUP_H_
