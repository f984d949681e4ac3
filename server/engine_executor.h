#ifndef DITSERVE_SERVER_ENGINE_EXECUTOR_H_
#define DITSERVE_SERVER_ENGINE_EXECUTOR_H_

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/engine/job_queue.h"
#include "core/engine/stage_timings.h"
#include "server/executor.h"

namespace ditserve::server {

// Turns rank 0's gathered latents [images, channels, h, w] into the images
// of config.output_format, recording vae_decode and encode in `timings`.
using OutputEncoder = std::function<absl::StatusOr<std::vector<v1::Image>>(
    const v1::InputConfig& config, const at::Tensor& latents,
    engine::StageTimings& timings)>;

// Runs configs through rank 0's RankLoop (which broadcasts them to every
// rank) by handing them to its JobQueue and waiting for the outcome.
class EngineExecutor : public Executor {
 public:
  // `max_run_time` bounds the wait for one outcome (the rank loop's own
  // collective timeouts normally end a broken run much sooner).
  EngineExecutor(engine::JobQueue* jobs, OutputEncoder encode,
                 absl::Duration max_run_time);

  absl::StatusOr<v1::GenerateResponse> Execute(const v1::InputConfig& config,
                                               const StepFn& on_step) override;

 private:
  engine::JobQueue* const jobs_;
  const OutputEncoder encode_;
  const absl::Duration max_run_time_;
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_ENGINE_EXECUTOR_H_
