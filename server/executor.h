#ifndef DITSERVE_SERVER_EXECUTOR_H_
#define DITSERVE_SERVER_EXECUTOR_H_

#include <functional>

#include "absl/status/statusor.h"
#include "ditserve/v1/control.pb.h"
#include "ditserve/v1/generation.pb.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::server {

// Runs frozen configs on the whole rank group from rank 0's scheduler thread.
class Executor {
 public:
  // Called on rank 0 after every denoising step (1-based `step`); returns the
  // decision every rank applies before the next step.
  using StepFn = std::function<v1::StepDecision(int step, int total_steps)>;

  virtual ~Executor() = default;

  // Broadcasts `config`, runs it on every rank and returns the images (in
  // config.output_format) and every rank's stage timings; `config` is not
  // copied into the response.
  virtual absl::StatusOr<v1::GenerateResponse> Execute(
      const v1::InputConfig& config, const StepFn& on_step) = 0;
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_EXECUTOR_H_
