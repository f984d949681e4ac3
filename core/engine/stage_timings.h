#ifndef DITSERVE_CORE_ENGINE_STAGE_TIMINGS_H_
#define DITSERVE_CORE_ENGINE_STAGE_TIMINGS_H_

#include <array>
#include <chrono>

#include "core/engine/stage.h"

namespace ditserve::engine {

// Seconds one rank spent in each stage of one request; stages it did not
// run stay 0.
class StageTimings {
 public:
  // Adds `seconds` to the stage (a stage may be entered more than once).
  void Add(Stage stage, double seconds) {
    seconds_[static_cast<int>(stage)] += seconds;
  }
  double seconds(Stage stage) const {
    return seconds_[static_cast<int>(stage)];
  }

 private:
  std::array<double, kStageCount> seconds_{};
};

// Adds the time from construction to destruction to one stage.
class ScopedStageTimer {
 public:
  ScopedStageTimer(StageTimings& timings, Stage stage)
      : timings_(timings),
        stage_(stage),
        start_(std::chrono::steady_clock::now()) {}
  ~ScopedStageTimer() {
    timings_.Add(stage_, std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start_)
                             .count());
  }
  ScopedStageTimer(const ScopedStageTimer&) = delete;
  ScopedStageTimer& operator=(const ScopedStageTimer&) = delete;

 private:
  StageTimings& timings_;
  Stage stage_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_STAGE_TIMINGS_H_
