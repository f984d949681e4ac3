#include "core/engine/run_failure_board.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"

namespace ditserve::engine {
namespace {

// Set by any rank that failed in `run`.
std::string AnyRankKey(int64_t run) { return absl::StrCat("failure/", run); }
std::string RankKey(int64_t run, int rank) {
  return absl::StrCat("failure/", run, "/rank", rank);
}

std::vector<uint8_t> Bytes(const std::string& text) {
  return std::vector<uint8_t>(text.begin(), text.end());
}

}  // namespace

RunFailureBoard::RunFailureBoard(c10::intrusive_ptr<c10d::Store> store,
                                 int rank)
    : store_(std::move(store)), rank_(rank) {}

void RunFailureBoard::BeginNextRun() { run_.fetch_add(1); }

absl::Status RunFailureBoard::Post(const absl::Status& failure) {
  const int64_t run = run_.load();
  const std::string text = absl::StrCat(
      "rank ", rank_, ": ", absl::StatusCodeToString(failure.code()), ": ",
      failure.message());
  return base::GuardedAs(
      absl::StatusCode::kUnavailable,
      absl::StrCat("posting the failure of run ", run, " in the store"), [&] {
        store_->set(RankKey(run, rank_), Bytes(text));
        store_->set(AnyRankKey(run), Bytes(text));
        // A set gets no reply; a check on the same connection returns once
        // the store holds both, so that the next read finds them.
        store_->check({AnyRankKey(run)});
      });
}

absl::StatusOr<std::optional<std::string>> RunFailureBoard::ReadAny() const {
  const int64_t run = run_.load();
  return base::GuardedAs(
      absl::StatusCode::kUnavailable,
      absl::StrCat("reading the failures of run ", run, " in the store"),
      [&]() -> std::optional<std::string> {
        const std::string key = AnyRankKey(run);
        if (!store_->check({key})) return std::nullopt;
        const std::vector<uint8_t> text = store_->get(key);
        return std::string(text.begin(), text.end());
      });
}

std::optional<std::string> RunFailureBoard::FailedAmong(
    const std::vector<int>& ranks) const {
  const int64_t run = run_.load();
  const absl::StatusOr<std::optional<std::string>> posted = base::GuardedAs(
      absl::StatusCode::kUnavailable, "reading the failures of peers",
      [&]() -> std::optional<std::string> {
        for (const int rank : ranks) {
          if (rank == rank_) continue;
          const std::string key = RankKey(run, rank);
          if (!store_->check({key})) continue;
          const std::vector<uint8_t> text = store_->get(key);
          return std::string(text.begin(), text.end());
        }
        return std::nullopt;
      });
  // Unreadable: the wait goes on as it would without a board.
  return posted.ok() ? *posted : std::nullopt;
}

dist::FailedRankProbe RunFailureBoard::ProbeOf(const RunFailureBoard* board) {
  if (board == nullptr) return nullptr;
  return [board](const std::vector<int>& ranks) {
    return board->FailedAmong(ranks);
  };
}

}  // namespace ditserve::engine
