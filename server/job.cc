#include "server/job.h"

#include <utility>

namespace ditserve::server {

Job::Job(v1::InputConfig config, std::string client, absl::Time received,
         absl::Time enqueued, EventFn on_event, DoneFn on_done)
    : config_(std::move(config)),
      client_(std::move(client)),
      received_(received),
      enqueued_(enqueued),
      on_event_(std::move(on_event)),
      on_done_(std::move(on_done)) {}

std::optional<absl::StatusCode> Job::StopCode(absl::Time now) const {
  // Far above loopback transit; a client that cancels on its own this close
  // to its deadline loses nothing by the label.
  constexpr absl::Duration kClientAhead = absl::Milliseconds(250);
  if (now >= deadline()) return absl::StatusCode::kDeadlineExceeded;
  if (!cancelled()) return std::nullopt;
  return now >= deadline() - kClientAhead ? absl::StatusCode::kDeadlineExceeded
                                          : absl::StatusCode::kCancelled;
}

absl::Time Job::deadline() const {
  return config_.deadline_unix_micros() == 0
             ? absl::InfiniteFuture()
             : absl::FromUnixMicros(config_.deadline_unix_micros());
}

void Job::ReportEvent(v1::GenerateStreamResponse event) {
  if (on_event_ && !finished()) on_event_(std::move(event));
}

bool Job::Finish(absl::StatusOr<v1::GenerateResponse> outcome) {
  DoneFn done;
  {
    absl::MutexLock lock(&mu_);
    if (!on_done_) return false;
    done = std::move(on_done_);
    on_done_ = nullptr;
  }
  done(std::move(outcome));
  return true;
}

bool Job::finished() const {
  absl::MutexLock lock(&mu_);
  return on_done_ == nullptr;
}

}  // namespace ditserve::server
