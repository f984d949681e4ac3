#include "core/schedulers/scheduler.h"

namespace ditserve::schedulers {

int Scheduler::num_steps() const {
  const at::Tensor& steps = timesteps();
  return steps.defined() ? static_cast<int>(steps.numel()) : 0;
}

}  // namespace ditserve::schedulers
