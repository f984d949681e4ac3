#ifndef DITSERVE_CORE_ENGINE_ENGINE_H_
#define DITSERVE_CORE_ENGINE_ENGINE_H_

#include <ATen/core/Tensor.h>
#include <c10/core/TensorOptions.h>

#include <chrono>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/dist/collective.h"
#include "core/dist/control_channel.h"
#include "core/dist/mesh.h"
#include "core/dist/mesh_groups.h"
#include "core/dist/run_failure_board.h"
#include "core/engine/buffer_plan.h"
#include "core/engine/rank_program.h"
#include "core/engine/receive_buffers.h"
#include "core/engine/shape_key.h"
#include "core/engine/stage_timings.h"
#include "ditserve/v1/control.pb.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::engine {

// Watches one request on rank 0; the server implements it.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  // Asked on rank 0 after each denoising step (0-based) of `steps`; its
  // answer is broadcast to every rank. CONTINUE, CANCEL (client cancelled)
  // or ABORT (host stopping); the engine itself adds DEADLINE.
  virtual v1::StepDecision DecideAfterStep(int step, int steps) = 0;
  // Called on rank 0 as the denoising loop begins: what came before it
  // (broadcast, prepare, text encoding) is not the first step's time.
  virtual void OnDenoiseStarted() {}
  // Asked on rank 0 after each 1-based step of config.partial_image_steps,
  // after that step's decision, with the estimate of every prompt's clean
  // latents ([prompts, ...shapes.image_latent_shape]), which it may keep.
  // The run goes on when it returns, so a slow preview should not hold it.
  virtual void OnPartialLatents(int step, at::Tensor latents) {}
};

struct EngineOptions {
  families::ModelDimensions dimensions;
  // dtype and device of the receive buffers.
  c10::TensorOptions tensor_options;
  // Longest wait of a data-plane collective.
  std::chrono::milliseconds collective_timeout{30000};
  // Where a rank posts that its share of a run failed: rank 0 reads it at
  // every step boundary, and the rank's dp group peers through their
  // watchdogs. Null: only rank 0's own failure stops a run early, and peers
  // waiting for the failed rank wait until collective_timeout.
  dist::RunFailureBoard* run_failures = nullptr;
};

// Runs frozen configs on one rank. Prepare sizes the receive buffers from
// the config (reallocating only when its shape key changes); Run refuses a
// config whose shape key differs from the prepared one. Every rank calls
// both with the same config. Not thread-safe.
class Engine {
 public:
  Engine(int rank, const dist::Mesh& mesh, const dist::MeshGroups& groups,
         dist::ControlChannel& channel, dist::Watchdog* watchdog,
         RankProgram& program, EngineOptions options);

  // INTERNAL when the config's parallel degrees are not this mesh's (the
  // host froze it for its own mesh, so this is a server fault, not the
  // client's); INVALID_ARGUMENT from PlanBuffers; RESOURCE_EXHAUSTED when
  // allocation fails.
  absl::Status Prepare(const v1::InputConfig& config, StageTimings& timings);

  // INTERNAL (listing the differing fields) when `config` was not the
  // prepared shape; CANCELLED / DEADLINE_EXCEEDED / UNAVAILABLE when rank
  // 0 stopped the run at a step boundary, ABORTED when it stopped it there
  // because a dp group's share failed; otherwise the rank program's result.
  // `observer` is used on rank 0 only and may be null.
  absl::StatusOr<at::Tensor> Run(const v1::InputConfig& config,
                                 RunObserver* observer, StageTimings& timings);

  // The prepared plan; nullptr before the first successful Prepare.
  const BufferPlan* plan() const;
  // How many times buffers were (re)allocated.
  int allocations() const { return allocations_; }

 private:
  // Rank 0's decision after `step`, broadcast; the Status all ranks stop
  // with, or OK to continue.
  absl::Status StepBoundary(const v1::InputConfig& config,
                            RunObserver* observer, int step);
  // Rank 0: RankContext::stop_at_boundary.
  absl::Status StopAtBoundary(const v1::InputConfig& config, int step);
  // Rank 0, in a run of several dp groups: whether a rank posted that its
  // share of the run failed (any rank: the failed rank's dp group stops at
  // the boundary as well as the others, with no wait of its left unmatched).
  bool RunFailurePosted(const v1::InputConfig& config, int step);

  const int rank_;
  const dist::Mesh& mesh_;
  const dist::MeshGroups& groups_;
  dist::ControlChannel& channel_;
  dist::Watchdog* watchdog_;
  RankProgram& program_;
  EngineOptions options_;
  std::optional<ShapeKey> prepared_key_;
  std::optional<ReceiveBuffers> buffers_;
  int allocations_ = 0;
  // The step boundaries of the run in progress.
  StepProgress progress_;
  // Runs started, the one in progress included: alike on every rank, so it
  // names the run on the RunFailureBoard.
  int64_t runs_started_ = 0;
};

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_ENGINE_H_
