#include "clients/ditctl/chunked_outputs.h"

#include "absl/strings/str_cat.h"
#include "clients/ditctl/append_slice.h"

namespace ditserve::ditctl {

absl::Status ChunkedOutputs::Add(
    const v1::GenerateStreamResponse::ImageChunk& chunk) {
  const std::string what = absl::StrCat("output ", chunk.image_index());
  const auto [it, first] = outputs_.try_emplace(chunk.image_index());
  Output& output = it->second;
  if (first) output.total_bytes = chunk.total_bytes();
  // A total that moves would make a short output look whole.
  if (chunk.total_bytes() != output.total_bytes) {
    return absl::InternalError(
        absl::StrCat(what, ": a chunk of total_bytes ", chunk.total_bytes(),
                     " after ones of ", output.total_bytes));
  }
  return AppendSlice(what, chunk.offset(), output.total_bytes, chunk.data(),
                     output.data)
      .status();
}

absl::StatusOr<absl::string_view> ChunkedOutputs::Data(
    const v1::GenerateResponse& result, int index) const {
  const std::string& own = result.images(index).data();
  const auto chunked = outputs_.find(index);
  if (chunked == outputs_.end()) {
    if (own.empty()) {
      return absl::InternalError(absl::StrCat(
          "output ", index,
          ": no data came, neither in the result nor in image_chunks"));
    }
    return absl::string_view(own);
  }
  if (!own.empty()) {
    return absl::InternalError(
        absl::StrCat("output ", index,
                     ": data came both in the result and in image_chunks"));
  }
  const Output& output = chunked->second;
  if (static_cast<int64_t>(output.data.size()) != output.total_bytes) {
    return absl::InternalError(absl::StrCat(
        "output ", index, ": ", output.data.size(), " of its ",
        output.total_bytes,
        " bytes came in image_chunks before the result; the rest never did"));
  }
  return absl::string_view(output.data);
}

}  // namespace ditserve::ditctl
