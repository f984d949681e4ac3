#include "core/dist/watchdog.h"

#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
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
                   int world_size, WatchdogOptions options)
    : store_(std::move(store)),
      rank_(rank),
      world_size_(world_size),
      options_(options),
      thread_([this] { Beat(); }) {}

Watchdog::~Watchdog() {
  {
    absl::MutexLock lock(&stop_mutex_);
    stop_ = true;
  }
  thread_.join();
  try {
    absl::MutexLock store_lock(&store_mutex_);
    store_->set(ExitedKey(rank_), std::vector<uint8_t>{1});
  } catch (const std::exception&) {
    // The store is gone (rank 0 exited first); nobody is left to ask.
  }
}

void Watchdog::Beat() {
  const std::string key = HeartbeatKey(rank_);
  bool warned = false;
  do {
    try {
      absl::MutexLock store_lock(&store_mutex_);
      store_->add(key, 1);
    } catch (const std::exception& error) {
      // Expected once rank 0 (the store host) has exited; the other ranks
      // find out through their collectives.
      if (!warned) {
        spdlog::warn("rank {}: heartbeat to the store failed: {}", rank_,
                     std::string(error.what()).substr(0, 200));
        warned = true;
      }
    }
  } while (!WaitForStop());
}

bool Watchdog::WaitForStop() {
  absl::MutexLock lock(&stop_mutex_);
  return stop_mutex_.AwaitWithTimeout(absl::Condition(&stop_),
                                      absl::FromChrono(options_.interval));
}

std::optional<std::vector<int64_t>> Watchdog::ReadCounters() {
  std::vector<int64_t> counters(world_size_, 0);
  try {
    absl::MutexLock store_lock(&store_mutex_);
    for (int rank = 0; rank < world_size_; ++rank) {
      counters[rank] = store_->add(HeartbeatKey(rank), 0);
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return counters;
}

std::vector<int> Watchdog::FindLostRanks() {
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
        !HasExited(rank)) {
      lost.push_back(rank);
    }
  }
  return lost;
}

bool Watchdog::HasExited(int rank) {
  try {
    absl::MutexLock store_lock(&store_mutex_);
    return store_->check({ExitedKey(rank)});
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace ditserve::dist
