#include "core/dist/collective_failure.h"

#include <utility>

#include "absl/strings/cord.h"

namespace ditserve::dist {
namespace {

constexpr char kCollectiveFailureUrl[] = "type.ditserve.dev/collective-failure";

}  // namespace

bool IsCollectiveFailure(const absl::Status& status) {
  return status.GetPayload(kCollectiveFailureUrl).has_value();
}

absl::Status MarkCollectiveFailure(absl::Status status) {
  if (!status.ok()) status.SetPayload(kCollectiveFailureUrl, absl::Cord());
  return status;
}

}  // namespace ditserve::dist
