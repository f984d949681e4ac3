#include "clients/ditctl/append_slice.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ditserve::ditctl {

absl::StatusOr<bool> AppendSlice(absl::string_view what, int64_t offset,
                                 int64_t total_bytes, absl::string_view data,
                                 std::string& whole) {
  const auto so_far = static_cast<int64_t>(whole.size());
  if (offset != so_far) {
    return absl::InternalError(
        absl::StrCat(what, ": a slice at ", offset, ", expected ", so_far));
  }
  const int64_t size = so_far + static_cast<int64_t>(data.size());
  if (size > total_bytes) {
    return absl::InternalError(absl::StrCat(
        what, ": ", size, " bytes past total_bytes ", total_bytes));
  }
  whole.append(data.data(), data.size());
  return size == total_bytes;
}

}  // namespace ditserve::ditctl
