#include "core/engine/dp_failure_board.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"

namespace ditserve::engine {
namespace {

std::string KeyOf(int64_t run) { return absl::StrCat("dp_failure/", run); }

}  // namespace

DpFailureBoard::DpFailureBoard(c10::intrusive_ptr<c10d::Store> store)
    : store_(std::move(store)) {}

absl::Status DpFailureBoard::Post(int64_t run, int rank,
                                  const absl::Status& failure) {
  const std::string text = absl::StrCat(
      "rank ", rank, ": ", absl::StatusCodeToString(failure.code()), ": ",
      failure.message());
  return base::GuardedAs(
      absl::StatusCode::kUnavailable,
      absl::StrCat("posting the failure of run ", run, " in the store"), [&] {
        const std::string key = KeyOf(run);
        store_->set(key, std::vector<uint8_t>(text.begin(), text.end()));
        // A set gets no reply; a check on the same connection returns once
        // the store holds it, so that rank 0's next read finds it.
        store_->check({key});
      });
}

absl::StatusOr<std::optional<std::string>> DpFailureBoard::Read(int64_t run) {
  return base::GuardedAs(
      absl::StatusCode::kUnavailable,
      absl::StrCat("reading the failures of run ", run, " in the store"),
      [&]() -> std::optional<std::string> {
        const std::string key = KeyOf(run);
        if (!store_->check({key})) return std::nullopt;
        const std::vector<uint8_t> text = store_->get(key);
        return std::string(text.begin(), text.end());
      });
}

}  // namespace ditserve::engine
