#include "core/dist/watchdog.h"

#include <exception>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "core/base/monotonic_clock.h"
#include "core/dist/group_store.h"
#include "spdlog/spdlog.h"

namespace ditserve::dist {
namespace {

std::string HeartbeatKey(int rank) {
  return absl::StrCat("ditserve/heartbeat/", rank);
}

std::string ExitedKey(int rank) {
  return absl::StrCat("ditserve/exited/", rank);
}

}  // namespace

Watchdog::Watchdog(c10::intrusive_ptr<c10d::Store> store, int rank,
                   int world_size, WatchdogOptions options, int64_t generation)
    : store_(std::move(store)),
      scoped_(ScopeToGeneration(store_, generation)),
      generation_(generation),
      rank_(rank),
      world_size_(world_size),
      options_(options),
      run_failures_(scoped_, world_size),
      counters_(world_size, -1),
      advanced_at_(world_size, base::MonotonicNow()),
      exited_(world_size, false),
      store_answered_at_(base::MonotonicNow()),
      beat_thread_([this] { Beat(); }),
      monitor_thread_([this] { Monitor(); }) {}

Watchdog::~Watchdog() {
  stop_.Notify();
  beat_thread_.join();
  monitor_thread_.join();
  {
    // The store is gone or silent: the mark would only wait for it.
    absl::MutexLock seen_lock(&seen_mutex_);
    if (store_call_failed_) return;
  }
  // A failure means the store is gone (rank 0 exited first); nobody is left
  // to ask.
  CallStore([&] {
    scoped_->set(ExitedKey(rank_), std::vector<uint8_t>{1});
    return absl::OkStatus();
  }).IgnoreError();
}

absl::Status Watchdog::CallStore(absl::FunctionRef<absl::Status()> call) {
  absl::MutexLock store_lock(&store_mutex_);
  {
    absl::MutexLock seen_lock(&seen_mutex_);
    store_call_since_ = base::MonotonicNow();
  }
  absl::Status status;
  try {
    status = call();
  } catch (const std::exception& error) {
    status = absl::UnavailableError(error.what());
  }
  absl::MutexLock seen_lock(&seen_mutex_);
  store_call_since_.reset();
  store_call_failed_ = !status.ok();
  return status;
}

void Watchdog::Beat() {
  const std::string key = HeartbeatKey(rank_);
  bool warned = false;
  do {
    const absl::Status bumped = CallStore([&] {
      scoped_->add(key, 1);
      return absl::OkStatus();
    });
    if (bumped.ok()) {
      ObserveStore();
    } else if (!warned) {
      // Expected once rank 0 (the store host) has exited; the other ranks
      // find out through their collectives.
      spdlog::warn("rank {}: heartbeat to the store failed: {}", rank_,
                   std::string(bumped.message().substr(0, 200)));
      warned = true;
    }
  } while (!WaitForStop());
}

void Watchdog::ObserveStore() {
  const std::optional<std::vector<int64_t>> counters = ReadCounters();
  if (!counters.has_value() || !Observe(*counters, base::MonotonicNow()) ||
      !ObserveGeneration()) {
    return;
  }
  ObserveRunFailures();
}

bool Watchdog::Observe(const std::vector<int64_t>& counters, absl::Time now) {
  std::vector<int> silent;
  {
    absl::MutexLock seen_lock(&seen_mutex_);
    store_answered_at_ = now;
    for (int rank = 0; rank < world_size_; ++rank) {
      if (counters[rank] != counters_[rank]) {
        counters_[rank] = counters[rank];
        advanced_at_[rank] = now;
      } else if (rank != rank_ && !exited_[rank]) {
        silent.push_back(rank);
      }
    }
  }
  // Only a silent rank may have exited; asking the store outside the lock
  // keeps HungRanks from waiting on it.
  for (int rank : silent) {
    const std::optional<bool> exited = HasExited(rank);
    if (!exited.has_value()) return false;
    if (*exited) {
      absl::MutexLock seen_lock(&seen_mutex_);
      exited_[rank] = true;
    }
  }
  return true;
}

bool Watchdog::ObserveGeneration() {
  int64_t current = generation_;
  if (!CallStore([&] {
         current = ReadCurrentGeneration(*store_);
         return absl::OkStatus();
       }).ok()) {
    return false;
  }
  if (current == generation_) return true;
  absl::MutexLock seen_lock(&seen_mutex_);
  superseded_by_ = current;
  return true;
}

void Watchdog::ObserveRunFailures() {
  std::optional<int64_t> run;
  int64_t count_seen = 0;
  {
    absl::MutexLock seen_lock(&seen_mutex_);
    run = followed_run_;
    count_seen = static_cast<int64_t>(run_posts_.size());
  }
  if (!run.has_value()) return;
  absl::StatusOr<int64_t> count;
  if (!CallStore([&] {
         return (count = run_failures_.Count(*run)).status();
       }).ok() ||
      *count == count_seen) {
    // Each rank posts once a run, so the count tells when to read again.
    return;
  }
  // A call per rank, so that StoreSilence times one or two round trips.
  std::map<int, std::string> posts;
  for (int rank = 0; rank < world_size_; ++rank) {
    absl::StatusOr<std::optional<std::string>> post;
    if (!CallStore([&] {
           return (post = run_failures_.ReadRank(*run, rank)).status();
         }).ok()) {
      return;
    }
    if (post->has_value()) posts.emplace(rank, **std::move(post));
  }
  absl::MutexLock seen_lock(&seen_mutex_);
  // The rank may have moved on to its next run meanwhile.
  if (followed_run_ == run) run_posts_ = std::move(posts);
}

void Watchdog::FollowRun(int64_t run) {
  absl::MutexLock seen_lock(&seen_mutex_);
  followed_run_ = run;
  run_posts_.clear();
}

std::optional<std::string> Watchdog::FailedAmong(
    const std::vector<int>& ranks) {
  std::map<int, std::string> failed;
  absl::MutexLock seen_lock(&seen_mutex_);
  for (int rank : ranks) {
    if (rank == rank_) continue;
    if (auto post = run_posts_.find(rank); post != run_posts_.end()) {
      failed.insert(*post);
    }
  }
  if (failed.empty()) return std::nullopt;
  return DescribePosts(failed);
}

std::optional<int64_t> Watchdog::SupersededBy() {
  absl::MutexLock seen_lock(&seen_mutex_);
  return superseded_by_;
}

absl::Duration Watchdog::StoreSilence() {
  absl::MutexLock seen_lock(&seen_mutex_);
  if (store_call_failed_) return absl::InfiniteDuration();
  if (!store_call_since_.has_value()) return absl::ZeroDuration();
  return base::MonotonicNow() - *store_call_since_;
}

std::vector<int> Watchdog::HungRanks() {
  const absl::Duration hung_after = absl::FromChrono(options_.hung_after);
  absl::MutexLock seen_lock(&seen_mutex_);
  if (rank_ != 0 && store_call_since_.has_value() &&
      base::MonotonicNow() - *store_call_since_ >= hung_after) {
    return {0};
  }
  std::vector<int> hung;
  for (int rank = 0; rank < world_size_; ++rank) {
    // Measured against the last answer of the store rather than the clock,
    // so that this process being paused itself names nobody else.
    if (rank != rank_ && !exited_[rank] &&
        store_answered_at_ - advanced_at_[rank] >= hung_after) {
      hung.push_back(rank);
    }
  }
  return hung;
}

std::vector<int> Watchdog::ExitedRanks() {
  absl::MutexLock seen_lock(&seen_mutex_);
  std::vector<int> exited;
  for (int rank = 0; rank < world_size_; ++rank) {
    if (rank != rank_ && exited_[rank]) exited.push_back(rank);
  }
  return exited;
}

void Watchdog::Monitor() {
  while (!WaitForStop()) {
    const bool group_broke = !HungRanks().empty() || !ExitedRanks().empty() ||
                             SupersededBy().has_value();
    // Called under the lock so that none runs after RemoveAbortOnGiveUp
    // returned (the work it aborts may be gone by then).
    absl::MutexLock lock(&aborts_mutex_);
    for (auto pending = aborts_.begin(); pending != aborts_.end();) {
      if (group_broke || FailedAmong(pending->second.failing).has_value()) {
        pending->second.abort();
        pending = aborts_.erase(pending);
      } else {
        ++pending;
      }
    }
  }
}

int64_t Watchdog::AbortOnGiveUp(std::function<void()> abort,
                                std::vector<int> failing) {
  absl::MutexLock lock(&aborts_mutex_);
  const int64_t id = next_abort_id_++;
  aborts_.emplace(id, PendingAbort{.abort = std::move(abort),
                                   .failing = std::move(failing)});
  return id;
}

void Watchdog::RemoveAbortOnGiveUp(int64_t id) {
  absl::MutexLock lock(&aborts_mutex_);
  aborts_.erase(id);
}

bool Watchdog::WaitForStop() {
  return stop_.WaitForNotificationWithTimeout(
      absl::FromChrono(options_.interval));
}

std::optional<std::vector<int64_t>> Watchdog::ReadCounters() {
  std::vector<int64_t> counters(world_size_, 0);
  for (int rank = 0; rank < world_size_; ++rank) {
    if (!CallStore([&] {
           counters[rank] = scoped_->add(HeartbeatKey(rank), 0);
           return absl::OkStatus();
         }).ok()) {
      return std::nullopt;
    }
  }
  return counters;
}

std::vector<int> Watchdog::FindLostRanks() {
  if (rank_ != 0 && StoreSilence() >= absl::FromChrono(options_.hung_after)) {
    return {0};
  }
  std::optional<std::vector<int64_t>> before = ReadCounters();
  if (!before.has_value()) {
    return rank_ == 0 ? std::vector<int>{} : std::vector<int>{0};
  }
  absl::SleepFor(absl::FromChrono(options_.interval) *
                 options_.lapsed_intervals);
  std::optional<std::vector<int64_t>> after = ReadCounters();
  if (!after.has_value()) {
    return rank_ == 0 ? std::vector<int>{} : std::vector<int>{0};
  }
  std::vector<int> lost;
  for (int rank = 0; rank < world_size_; ++rank) {
    if (rank != rank_ && (*after)[rank] == (*before)[rank] &&
        !HasExited(rank).value_or(false)) {
      lost.push_back(rank);
    }
  }
  return lost;
}

std::optional<bool> Watchdog::HasExited(int rank) {
  bool exited = false;
  if (!CallStore([&] {
         exited = scoped_->check({ExitedKey(rank)});
         return absl::OkStatus();
       }).ok()) {
    return std::nullopt;
  }
  return exited;
}

}  // namespace ditserve::dist
