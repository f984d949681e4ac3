#include "core/engine/engine.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "spdlog/spdlog.h"

namespace ditserve::engine {
namespace {

// Empty when `config` runs on `mesh`, else what differs.
std::string MeshMismatch(const v1::ParallelConfig& parallel,
                         const dist::Mesh& mesh) {
  std::vector<std::string> differing;
  const std::pair<const char*, std::pair<int, int>> degrees[] = {
      {"world_size", {parallel.world_size(), mesh.world_size()}},
      {"dp_degree", {parallel.dp_degree(), mesh.Degree(dist::Axis::kDp)}},
      {"cfg_degree", {parallel.cfg_degree(), mesh.Degree(dist::Axis::kCfg)}},
      {"pipefusion_degree",
       {parallel.pipefusion_degree(), mesh.Degree(dist::Axis::kPp)}},
      {"ring_degree", {parallel.ring_degree(), mesh.Degree(dist::Axis::kRing)}},
      {"ulysses_degree",
       {parallel.ulysses_degree(), mesh.Degree(dist::Axis::kUlysses)}},
  };
  for (const auto& [name, values] : degrees) {
    if (values.first != values.second) {
      differing.push_back(absl::StrCat("parallel.", name, " ", values.first,
                                       " (mesh ", values.second, ")"));
    }
  }
  return absl::StrJoin(differing, ", ");
}

}  // namespace

Engine::Engine(int rank, const dist::Mesh& mesh, const dist::MeshGroups& groups,
               dist::ControlChannel& channel, dist::Watchdog* watchdog,
               RankProgram& program, EngineOptions options)
    : rank_(rank),
      mesh_(mesh),
      groups_(groups),
      channel_(channel),
      watchdog_(watchdog),
      program_(program),
      options_(std::move(options)) {}

const BufferPlan* Engine::plan() const {
  return buffers_.has_value() ? &buffers_->plan() : nullptr;
}

absl::Status Engine::Prepare(const v1::InputConfig& config,
                             StageTimings& timings) {
  ScopedStageTimer timer(timings, Stage::kPrepare);
  const std::string mismatch = MeshMismatch(config.parallel(), mesh_);
  if (!mismatch.empty()) {
    return absl::InternalError(
        absl::StrCat("config ", config.request_id(),
                     " was frozen for another mesh: ", mismatch));
  }
  ShapeKey key = ShapeKey::Of(config);
  if (prepared_key_.has_value() && *prepared_key_ == key) {
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(
      BufferPlan plan,
      PlanBuffers(config, mesh_.CoordinatesOf(rank_), options_.dimensions));
  // Drop the old buffers first so peak memory is one plan, not two.
  buffers_.reset();
  prepared_key_.reset();
  ASSIGN_OR_RETURN(ReceiveBuffers buffers,
                   ReceiveBuffers::Allocate(plan, options_.tensor_options));
  buffers_ = std::move(buffers);
  prepared_key_ = std::move(key);
  ++allocations_;
  return absl::OkStatus();
}

absl::StatusOr<at::Tensor> Engine::Run(const v1::InputConfig& config,
                                       RunObserver* observer,
                                       StageTimings& timings) {
  ++runs_started_;
  if (watchdog_ != nullptr) watchdog_->FollowRun(runs_started_);
  // Two runs back: every rank finished that run before it began the last
  // one, so no watchdog still follows it (one following the last run may
  // be between a key's check and its get, which a deletion would leave
  // waiting for the store's timeout).
  if (rank_ == 0 && options_.run_failures != nullptr && runs_started_ > 2) {
    if (absl::Status forgot = options_.run_failures->Forget(runs_started_ - 2);
        !forgot.ok()) {
      spdlog::warn("{}", forgot.ToString());
    }
  }
  if (!prepared_key_.has_value()) {
    return absl::InternalError(absl::StrCat("config ", config.request_id(),
                                            " run before any Prepare"));
  }
  const std::vector<std::string> differing =
      prepared_key_->DifferingFields(ShapeKey::Of(config));
  if (!differing.empty()) {
    return absl::InternalError(absl::StrCat(
        "config ", config.request_id(),
        " does not match the prepared shapes (prepared → requested): ",
        absl::StrJoin(differing, ", ")));
  }
  progress_ = StepProgress{};
  RankContext context{
      .config = config,
      .rank = rank_,
      .mesh = mesh_,
      .groups = groups_,
      .buffers = *buffers_,
      .step_boundary =
          [this, &config, observer](int step) {
            absl::Status agreed = StepBoundary(config, observer, step);
            if (agreed.ok()) {
              ++progress_.agreed_steps;
            } else {
              progress_.stopped = true;
            }
            return agreed;
          },
      .step_progress = [this] { return progress_; },
      .stop_at_boundary =
          [this, &config](int step) { return StopAtBoundary(config, step); },
      .post_failure =
          [this](const absl::Status& failure) {
            if (options_.run_failures == nullptr) return absl::OkStatus();
            // Rank 0 hosts the store: once it stopped answering, a post
            // would block until the store client's timeout, though the
            // group breaks anyway. Waiting a heartbeat window first keeps
            // a slow answer from costing the peers their early end.
            if (watchdog_ != nullptr &&
                watchdog_->StoreSilence() >=
                    absl::FromChrono(watchdog_->window())) {
              return absl::UnavailableError(
                  "not posted: the store, which rank 0 hosts, stopped "
                  "answering");
            }
            return options_.run_failures->Post(runs_started_, rank_, failure);
          },
      .partial_latents =
          [observer](int step, at::Tensor latents) {
            if (observer != nullptr) {
              observer->OnPartialLatents(step, std::move(latents));
            }
          },
      .denoise_started =
          [observer] {
            if (observer != nullptr) observer->OnDenoiseStarted();
          },
      .timings = timings,
      .collective_on =
          [this](dist::Axis axis) {
            return dist::CollectiveContext{
                .group_name = std::string(dist::AxisName(axis)),
                .timeout = options_.collective_timeout,
                .watchdog = watchdog_,
                .leave_on_failure = groups_.LeaveOnFailure(axis)};
          },
  };
  // The boundary for what the program's own guards (the denoise loop's,
  // RunDpGroup's) leave: an exception past it would end the process.
  return base::Guarded("running the rank program",
                       [&] { return program_.Run(context); });
}

absl::Status Engine::StepBoundary(const v1::InputConfig& config,
                                  RunObserver* observer, int step) {
  const int steps = config.num_inference_steps();
  v1::StepDecision decision = v1::STEP_DECISION_CONTINUE;
  if (rank_ == 0) {
    if (observer != nullptr) decision = observer->DecideAfterStep(step, steps);
    if (decision == v1::STEP_DECISION_CONTINUE &&
        config.deadline_unix_micros() != 0 &&
        absl::ToUnixMicros(absl::Now()) >= config.deadline_unix_micros()) {
      decision = v1::STEP_DECISION_DEADLINE;
    }
    if (decision == v1::STEP_DECISION_CONTINUE &&
        RunFailurePosted(config, step)) {
      decision = v1::STEP_DECISION_DP_GROUP_FAILED;
    }
  }
  ASSIGN_OR_RETURN(v1::StepDecision agreed,
                   channel_.BroadcastStepDecision(decision));
  const std::string where = absl::StrCat(
      "request ", config.request_id(), " after step ", step + 1, " of ", steps);
  switch (agreed) {
    case v1::STEP_DECISION_CONTINUE:
      return absl::OkStatus();
    case v1::STEP_DECISION_CANCEL:
      return absl::CancelledError(absl::StrCat("client cancelled ", where));
    case v1::STEP_DECISION_DEADLINE:
      return absl::DeadlineExceededError(
          absl::StrCat("deadline passed for ", where));
    case v1::STEP_DECISION_ABORT:
      return absl::UnavailableError(
          absl::StrCat("host shutting down; stopped ", where));
    case v1::STEP_DECISION_DP_GROUP_FAILED:
      return absl::AbortedError(
          absl::StrCat("a dp group failed; stopped ", where));
    default:
      return absl::InternalError(absl::StrCat(
          "unknown step decision ", static_cast<int>(agreed), " for ", where));
  }
}

absl::Status Engine::StopAtBoundary(const v1::InputConfig& config, int step) {
  if (rank_ != 0) {
    return absl::InternalError(absl::StrCat(
        "rank ", rank_, " asked to stop request ", config.request_id(),
        " at a step boundary; only rank 0 decides them"));
  }
  progress_.stopped = true;
  spdlog::warn("rank 0: stopping request {} for every rank after step {} of {}",
               config.request_id(), step + 1, config.num_inference_steps());
  return channel_.BroadcastStepDecision(v1::STEP_DECISION_DP_GROUP_FAILED)
      .status();
}

bool Engine::RunFailurePosted(const v1::InputConfig& config, int step) {
  if (options_.run_failures == nullptr || config.parallel().dp_degree() < 2) {
    return false;
  }
  const absl::StatusOr<std::map<int, std::string>> posts =
      options_.run_failures->Read(runs_started_);
  if (!posts.ok()) {
    // Without the post the failed group's ranks still follow to the end.
    spdlog::warn("rank 0: {}", posts.status().ToString());
    return false;
  }
  if (posts->empty()) return false;
  spdlog::warn(
      "rank 0: stopping request {} for every rank after step {} of {}, as "
      "{}",
      config.request_id(), step + 1, config.num_inference_steps(),
      dist::DescribePosts(*posts));
  return true;
}

}  // namespace ditserve::engine
