#include "core/dist/run_failure_board.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"

namespace ditserve::dist {
namespace {

// Counts the run's posts; absent until the first, so that a read of a run
// nobody failed is one check and leaves no key behind.
std::string CountKey(int64_t run) {
  return absl::StrCat(kRunFailureKeyPrefix, run);
}

std::string RankKey(int64_t run, int rank) {
  return absl::StrCat(kRunFailureKeyPrefix, run, "/", rank);
}

// The newest run posted, for ForgetNewest. A run starts only after every
// rank finished the one before, posts included, so it only grows.
std::string NewestKey() { return absl::StrCat(kRunFailureKeyPrefix, "newest"); }

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
        store_->set(NewestKey(), Bytes(absl::StrCat(run)));
        // A set gets no reply; an add's, on the same connection, comes once
        // the store holds them all.
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

absl::Status RunFailureBoard::ForgetNewest() {
  ASSIGN_OR_RETURN(
      const std::optional<std::string> newest,
      base::GuardedAs(absl::StatusCode::kUnavailable,
                      "reading the newest run failure from the store",
                      [&]() -> std::optional<std::string> {
                        if (!store_->check({NewestKey()})) return std::nullopt;
                        const std::vector<uint8_t> text =
                            store_->get(NewestKey());
                        return std::string(text.begin(), text.end());
                      }));
  if (!newest.has_value()) return absl::OkStatus();
  int64_t run = 0;
  if (absl::SimpleAtoi(*newest, &run)) {
    // Forget deletes the posts two runs back; one that failed (it only
    // warns) leaves an older run's.
    for (int64_t earlier = run - 2; earlier <= run; ++earlier) {
      RETURN_IF_ERROR(Forget(earlier));
    }
  }
  return base::GuardedAs(absl::StatusCode::kUnavailable,
                         "deleting the newest run failure from the store",
                         [&] { store_->deleteKey(NewestKey()); });
}

std::string DescribePosts(const std::map<int, std::string>& posts) {
  return absl::StrJoin(posts, "; ", [](std::string* out, const auto& post) {
    absl::StrAppend(out, "rank ", post.first, ": ", post.second);
  });
}

}  // namespace ditserve::dist
