#include "server/admission_queue.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/base/monotonic_clock.h"

namespace ditserve::server {
namespace {

// The answer to a queued job whose client cancelled or whose deadline
// passed (Job::StopCode's `stop`); `monotonic_now` on the job's clock.
absl::Status StoppedWhileQueued(const Job& job, absl::StatusCode stop,
                                absl::Time monotonic_now) {
  if (stop == absl::StatusCode::kDeadlineExceeded) {
    return absl::DeadlineExceededError(absl::StrCat(
        "deadline passed after ",
        absl::FormatDuration(monotonic_now - job.enqueued()), " in the queue"));
  }
  return absl::CancelledError("cancelled by the client while queued");
}

}  // namespace

double RunWork(const v1::InputConfig& config, int64_t hidden_size) {
  const v1::DerivedShapes& shapes = config.shapes();
  // In double: a queue of long runs of long sequences sums past int64.
  const double width = static_cast<double>(hidden_size);
  const double tokens = shapes.sequence_tokens();
  const double forwards = static_cast<double>(config.prompt_size()) *
                          shapes.guidance_branches() *
                          config.num_inference_steps();
  return std::max(
      1.0, forwards * tokens * (24 * width * width + 4 * width * tokens));
}

AdmissionQueue::AdmissionQueue(int capacity, int max_queued_per_client,
                               int64_t hidden_size,
                               std::function<void(int)> on_depth_change)
    : capacity_(capacity),
      max_queued_per_client_(max_queued_per_client),
      hidden_size_(hidden_size),
      on_depth_change_(std::move(on_depth_change)) {}

absl::StatusOr<int> AdmissionQueue::Push(
    std::shared_ptr<Job> job, const std::function<void(int)>& on_admitted) {
  absl::MutexLock lock(&mu_);
  if (draining_) {
    return absl::UnavailableError(
        "server is draining and accepts no new requests");
  }
  if (!paused_.ok()) return paused_;
  if (static_cast<int>(jobs_.size()) >= capacity_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("queue is full (", capacity_,
                     " requests waiting, --max_queue); retry later"));
  }
  if (max_queued_per_client_ > 0 &&
      std::count_if(jobs_.begin(), jobs_.end(),
                    [&job](const std::shared_ptr<Job>& queued) {
                      return queued->client() == job->client();
                    }) >= max_queued_per_client_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        job->client().empty() ? "requests without a named token have "
                              : absl::StrCat("client ", job->client(), " has "),
        max_queued_per_client_,
        " waiting (--max_queued_per_client); retry when one has run"));
  }
  const auto place = PlaceFor(*job);
  const int position = static_cast<int>(place - jobs_.begin());
  jobs_.insert(place, std::move(job));
  job_added_.SignalAll();
  NotifyDepthLocked();
  if (on_admitted) on_admitted(position);
  return position;
}

std::deque<std::shared_ptr<Job>>::iterator AdmissionQueue::PlaceFor(
    const Job& job) {
  const int priority = job.config().priority();
  // Among its priority, a job's turn comes after the work (RunWork) of the
  // jobs of its client that wait ahead of it: the new job goes behind every
  // job whose turn comes no later than its own, so that clients share the
  // group by work rather than by request (jobs of one client, and those
  // without a named token, which count as one, keep arrival order).
  double turn_of_new = 0;
  int own_ahead = 0;
  for (const std::shared_ptr<Job>& queued : jobs_) {
    if (queued->config().priority() == priority &&
        queued->client() == job.client()) {
      turn_of_new += RunWork(queued->config(), hidden_size_);
      ++own_ahead;
    }
  }
  // Turns count the jobs still queued, so a job that leaves (runs, is
  // cancelled, joins a batch) shortens its client's turns alone: the
  // client's next job may then have an earlier turn than one of its jobs
  // already queued (placed behind other clients' while more of its own
  // waited), and still goes behind all of them.
  absl::flat_hash_map<absl::string_view, double> work_ahead;
  return std::find_if(jobs_.begin(), jobs_.end(),
                      [&](const std::shared_ptr<Job>& queued) {
                        if (queued->config().priority() != priority) {
                          return queued->config().priority() < priority;
                        }
                        double& ahead = work_ahead[queued->client()];
                        const double turn = ahead;
                        ahead += RunWork(queued->config(), hidden_size_);
                        if (queued->client() == job.client()) --own_ahead;
                        return own_ahead == 0 && turn > turn_of_new;
                      });
}

bool AdmissionQueue::Remove(const std::shared_ptr<Job>& job) {
  absl::MutexLock lock(&mu_);
  const auto it = std::find(jobs_.begin(), jobs_.end(), job);
  if (it == jobs_.end()) return false;
  jobs_.erase(it);
  NotifyDepthLocked();
  return true;
}

std::shared_ptr<Job> AdmissionQueue::Pop(absl::Duration timeout) {
  const absl::Time give_up = base::MonotonicNow() + timeout;
  while (true) {
    std::shared_ptr<Job> job;
    {
      absl::MutexLock lock(&mu_);
      if (!job_added_.AwaitWithTimeout(
              mu_,
              [this]()
                  ABSL_NO_THREAD_SAFETY_ANALYSIS { return HasJobsLocked(); },
              give_up - base::MonotonicNow())) {
        return nullptr;
      }
      job = std::move(jobs_.front());
      jobs_.pop_front();
      NotifyDepthLocked();
    }
    // Finish abandoned jobs outside the lock: their callbacks talk to gRPC.
    const std::optional<absl::StatusCode> stop = job->StopCode(absl::Now());
    if (!stop.has_value()) return job;
    job->Finish(StoppedWhileQueued(*job, *stop, base::MonotonicNow()));
  }
}

std::vector<std::shared_ptr<Job>> AdmissionQueue::TakeMatching(
    const std::function<bool(const Job&)>& joins) {
  absl::MutexLock lock(&mu_);
  std::vector<std::shared_ptr<Job>> taken;
  // Cancelled and expired jobs stay for Pop to answer.
  const absl::Time now = absl::Now();
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    const Job& job = **it;
    if (!job.StopCode(now).has_value() && joins(job)) {
      taken.push_back(std::move(*it));
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
  if (!taken.empty()) NotifyDepthLocked();
  return taken;
}

int AdmissionQueue::ExpireWaiting(absl::Duration limit) {
  const absl::Time monotonic_now = base::MonotonicNow();
  std::vector<std::shared_ptr<Job>> expired;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = jobs_.begin(); it != jobs_.end();) {
      if (monotonic_now - (*it)->enqueued() > limit) {
        expired.push_back(std::move(*it));
        it = jobs_.erase(it);
      } else {
        ++it;
      }
    }
    if (!expired.empty()) NotifyDepthLocked();
  }
  int refused = 0;
  for (const std::shared_ptr<Job>& job : expired) {
    // A job its client already gave up on is answered and counted for that.
    if (const std::optional<absl::StatusCode> stop =
            job->StopCode(absl::Now())) {
      job->Finish(StoppedWhileQueued(*job, *stop, monotonic_now));
      continue;
    }
    ++refused;
    job->Finish(absl::ResourceExhaustedError(absl::StrCat(
        "waited ", absl::FormatDuration(monotonic_now - job->enqueued()),
        " in the queue, longer than --max_queue_wait_s ",
        absl::ToDoubleSeconds(limit),
        "; the server is overloaded, retry later or elsewhere")));
  }
  return refused;
}

int AdmissionQueue::FinishQueued(const absl::Status& why) {
  int finished = 0;
  while (std::shared_ptr<Job> job = Pop(absl::ZeroDuration())) {
    job->Finish(why);
    ++finished;
  }
  return finished;
}

void AdmissionQueue::StartDraining() {
  absl::MutexLock lock(&mu_);
  draining_ = true;
}

void AdmissionQueue::Pause(absl::Status why) {
  absl::MutexLock lock(&mu_);
  paused_ = std::move(why);
}

void AdmissionQueue::Resume() {
  absl::MutexLock lock(&mu_);
  paused_ = absl::OkStatus();
}

int AdmissionQueue::depth() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(jobs_.size());
}

bool AdmissionQueue::HasJobsLocked() const { return !jobs_.empty(); }

void AdmissionQueue::NotifyDepthLocked() {
  if (on_depth_change_) on_depth_change_(static_cast<int>(jobs_.size()));
}

}  // namespace ditserve::server
