#include "core/dist/run_failure_board.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"

namespace ditserve::dist {
namespace {

// Counts the run's posts; absent until the first, so that a read of a run
// nobody failed is one check and leaves no key behind.
std::string CountKey(int64_t run) { return absl::StrCat("run_failure/", run); }

std::string RankKey(int64_t run, int rank) {
  return absl::StrCat("run_failure/", run, "/", rank);
}

std::vector<uint8_t> Bytes(const std::string& text) {
  return std::vector<uint8_t>(text.begin(), text.end());
}

}  // namespace

RunFailureBoard::RunFailureBoard(c10::intrusive_ptr<c10d::Store> store,
                                 int world_size)
    : store_(std::move(store)), world_size_(world_size) {}

absl::Status RunFailureBoard::Post(int64_t run, int rank,
                                   const absl::Status& failure) {
  const std::string text = absl::StrCat(
      absl::StatusCodeToString(failure.code()), ": ", failure.message());
  return base::GuardedAs(
      absl::StatusCode::kUnavailable,
      absl::StrCat("posting the failure of run ", run, " in the store"), [&] {
        store_->set(RankKey(run, rank), Bytes(text));
        // A set gets no reply; an add's, on the same connection, comes once
        // the store holds both.
        store_->add(CountKey(run), 1);
      });
}

absl::StatusOr<int64_t> RunFailureBoard::Count(int64_t run) {
  return base::GuardedAs(
      absl::StatusCode::kUnavailable,
      absl::StrCat("counting the failures of run ", run, " in the store"),
      [&]() -> int64_t {
        if (!store_->check({CountKey(run)})) return 0;
        return store_->add(CountKey(run), 0);
      });
}

absl::StatusOr<std::map<int, std::string>> RunFailureBoard::Read(int64_t run) {
  std::map<int, std::string> posts;
  ASSIGN_OR_RETURN(const int64_t count, Count(run));
  if (count == 0) return posts;
  for (int rank = 0; rank < world_size_; ++rank) {
    ASSIGN_OR_RETURN(std::optional<std::string> post, ReadRank(run, rank));
    if (post.has_value()) posts.emplace(rank, *std::move(post));
  }
  return posts;
}

absl::StatusOr<std::optional<std::string>> RunFailureBoard::ReadRank(
    int64_t run, int rank) {
  return base::GuardedAs(
      absl::StatusCode::kUnavailable,
      absl::StrCat("reading rank ", rank, "'s failure of run ", run,
                   " in the store"),
      [&]() -> std::optional<std::string> {
        const std::string key = RankKey(run, rank);
        if (!store_->check({key})) return std::nullopt;
        const std::vector<uint8_t> text = store_->get(key);
        return std::string(text.begin(), text.end());
      });
}

absl::Status RunFailureBoard::Forget(int64_t run) {
  return base::GuardedAs(
      absl::StatusCode::kUnavailable,
      absl::StrCat("deleting the failures of run ", run, " from the store"),
      [&] {
        if (!store_->check({CountKey(run)})) return;
        for (int rank = 0; rank < world_size_; ++rank) {
          store_->deleteKey(RankKey(run, rank));
        }
        store_->deleteKey(CountKey(run));
      });
}

std::string DescribePosts(const std::map<int, std::string>& posts) {
  return absl::StrJoin(posts, "; ", [](std::string* out, const auto& post) {
    absl::StrAppend(out, "rank ", post.first, ": ", post.second);
  });
}

}  // namespace ditserve::dist
