#ifndef DITSERVE_SERVER_CALL_OWNERSHIP_H_
#define DITSERVE_SERVER_CALL_OWNERSHIP_H_

// What keeps a gRPC reactor alive, and what it must let go of at OnDone.
// gRPC needs a reactor until OnDone, and the job's callbacks may reach it
// later still (a late completion must not touch freed memory), so the call
// is shared: it holds itself until OnDone, and the job's callbacks hold it.
// The call also holds its job (to cancel it), and a streaming job keeps its
// progress callback after it finishes: that cycle leaked every
// GenerateStream until Release broke it.

#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/job.h"

namespace ditserve::server {

class CallOwnership {
 public:
  // The call owns itself from here until Release.
  void Bind(std::shared_ptr<void> self);
  void SetJob(std::shared_ptr<Job> job);
  // The job, or null before SetJob (a call answered at once) and after
  // Release.
  std::shared_ptr<Job> job() const;
  // Drops the job, then the call itself: the call may be destroyed by the
  // time this returns, so it must be the last thing OnDone does.
  void Release();

 private:
  std::shared_ptr<void> self_;
  mutable absl::Mutex mu_;
  std::shared_ptr<Job> job_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_CALL_OWNERSHIP_H_
