#ifndef DITSERVE_CLIENTS_DITCTL_APPEND_SLICE_H_
#define DITSERVE_CLIENTS_DITCTL_APPEND_SLICE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ditserve::ditctl {

// Appends `data`, the slice at `offset` of an item of `total_bytes` that the
// server streams in order (an image_chunk, a partial_image), to `whole`,
// which holds the slices before it. Returns whether `whole` is complete.
// INTERNAL, naming `what`, when the slice is not the next one or runs past
// total_bytes: a wrong file is worse than none.
absl::StatusOr<bool> AppendSlice(absl::string_view what, int64_t offset,
                                 int64_t total_bytes, absl::string_view data,
                                 std::string& whole);

}  // namespace ditserve::ditctl

#endif  // DITSERVE_CLIENTS_DITCTL_APPEND_SLICE_H_
