#include "server/call_ownership.h"

#include <utility>

namespace ditserve::server {

void CallOwnership::Bind(std::shared_ptr<void> self) {
  self_ = std::move(self);
}

void CallOwnership::SetJob(std::shared_ptr<Job> job) {
  absl::MutexLock lock(&mu_);
  job_ = std::move(job);
}

std::shared_ptr<Job> CallOwnership::job() const {
  absl::MutexLock lock(&mu_);
  return job_;
}

void CallOwnership::Release() {
  std::shared_ptr<Job> job;
  {
    absl::MutexLock lock(&mu_);
    job = std::move(job_);
  }
  // The last reference to this object may be the job's (through its
  // callbacks) or `self_`: both leave as locals, after the last member
  // access, and `self` before `job` so the job outlives the call.
  std::shared_ptr<void> self = std::move(self_);
}

}  // namespace ditserve::server
