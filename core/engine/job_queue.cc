#include "core/engine/job_queue.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace ditserve::engine {

absl::Status JobQueue::Push(Job job) {
  absl::MutexLock lock(&mutex_);
  if (closed_) {
    return absl::UnavailableError(absl::StrCat("not accepting request ",
                                               job.config.request_id(), ": ",
                                               close_reason_));
  }
  if (static_cast<int>(jobs_.size()) >= capacity_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("queue full: ", jobs_.size(), " requests wait (capacity ",
                     capacity_, ")"));
  }
  job.enqueued = std::chrono::steady_clock::now();
  jobs_.push_back(std::move(job));
  return absl::OkStatus();
}

JobQueue::Popped JobQueue::Pop(absl::Duration timeout) {
  absl::MutexLock lock(&mutex_);
  auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mutex_) {
    return !jobs_.empty() || closed_;
  };
  mutex_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  Popped popped;
  if (!jobs_.empty()) {
    popped.job = std::move(jobs_.front());
    jobs_.pop_front();
  } else {
    popped.closed = closed_;
  }
  return popped;
}

void JobQueue::Close(const std::string& reason) {
  absl::MutexLock lock(&mutex_);
  if (closed_) return;
  closed_ = true;
  close_reason_ = reason;
}

std::string JobQueue::close_reason() const {
  absl::MutexLock lock(&mutex_);
  return close_reason_;
}

std::vector<Job> JobQueue::TakeAll() {
  absl::MutexLock lock(&mutex_);
  std::vector<Job> jobs(std::make_move_iterator(jobs_.begin()),
                        std::make_move_iterator(jobs_.end()));
  jobs_.clear();
  return jobs;
}

}  // namespace ditserve::engine
