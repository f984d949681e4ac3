#ifndef DITSERVE_CORE_ENGINE_RANK_PROGRAM_H_
#define DITSERVE_CORE_ENGINE_RANK_PROGRAM_H_

#include <ATen/core/Tensor.h>

#include <chrono>
#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/dist/collective.h"
#include "core/dist/mesh.h"
#include "core/dist/mesh_groups.h"
#include "core/engine/receive_buffers.h"
#include "core/engine/stage_timings.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::engine {

// How far a run's step boundaries got; the same on every rank.
struct StepProgress {
  // Boundaries every rank agreed to continue past: the 0-based step whose
  // boundary comes next.
  int agreed_steps = 0;
  // Whether a boundary stopped the run, on every rank.
  bool stopped = false;
};

// Everything one run of a rank program may use on one rank.
struct RankContext {
  // The frozen config, identical on every rank.
  const v1::InputConfig& config;
  int rank;
  const dist::Mesh& mesh;
  const dist::MeshGroups& groups;
  // Sized by the plan of `config`; receive only through ForIncoming.
  ReceiveBuffers& buffers;
  // Call after each denoising step (0-based) on every rank: it broadcasts
  // rank 0's continue/cancel decision. Stop and return its error when it is
  // not OK (CANCELLED, DEADLINE_EXCEEDED, UNAVAILABLE, ABORTED), so all ranks
  // stop at the same step.
  std::function<absl::Status(int step)> step_boundary;
  // Where this run's step boundaries stand now.
  std::function<StepProgress()> step_progress;
  // Rank 0, when its share of the run failed between boundaries: tells
  // every rank at the boundary of 0-based `step`, which they reach next,
  // that the run stops there. Other ranks: INTERNAL.
  std::function<absl::Status(int step)> stop_at_boundary;
  // When this rank's share of the run failed between boundaries: posts it
  // (RunFailureBoard), for rank 0 to stop every rank at the next boundary it
  // decides and for the rank's dp group peers to stop waiting for it.
  std::function<absl::Status(const absl::Status& failure)> post_failure;
  // Rank 0: takes the gathered preview latents of every prompt after 1-based
  // `step`, one of config.partial_image_steps (GatherPartialLatents).
  std::function<void(int step, at::Tensor latents)> partial_latents;
  // Call as the denoising loop begins (RunObserver::OnDenoiseStarted).
  std::function<void()> denoise_started;
  StageTimings& timings;
  // How to wait for and explain a collective on the `axis` group.
  std::function<dist::CollectiveContext(dist::Axis axis)> collective_on;
  // The preview gathers (GatherPartialLatents) this rank has entered in
  // this run.
  int partial_gathers_entered = 0;
};

// What a model family implements: run one frozen config on this rank.
class RankProgram {
 public:
  virtual ~RankProgram() = default;

  // Returns the gathered output on rank 0 (for now the final latents,
  // [prompts, ...shapes.image_latent_shape]) and an undefined tensor on
  // other ranks.
  virtual absl::StatusOr<at::Tensor> Run(RankContext& context) = 0;

  // Rank 0, after Run: the VAE decode of the gathered latents [prompts,
  // ...shapes.image_latent_shape] into uint8 RGB [prompts, height, width, 3]
  // (video: [prompts, frames, height, width, 3]) at the config's size,
  // recording vae_decode in `timings`.
  virtual absl::StatusOr<at::Tensor> Decode(const v1::InputConfig& config,
                                            const at::Tensor& latents,
                                            StageTimings& timings) = 0;
};

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_RANK_PROGRAM_H_
