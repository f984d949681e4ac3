#ifndef DITSERVE_CLIENTS_DITCTL_CHUNKED_OUTPUTS_H_
#define DITSERVE_CLIENTS_DITCTL_CHUNKED_OUTPUTS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ditserve/v1/generation.pb.h"

namespace ditserve::ditctl {

// The outputs GenerateStream sends as image_chunks, joined by image_index.
// Whether each came whole is only known against the result, whose data for
// them is empty: taken on trust, a stream short of chunks became a cut-short
// file and exit 0.
class ChunkedOutputs {
 public:
  // Joins `chunk` to its output's earlier ones (see AppendSlice). INTERNAL,
  // naming the output, for a slice that is not the next one or a
  // total_bytes other than its earlier chunks'.
  absl::Status Add(const v1::GenerateStreamResponse::ImageChunk& chunk);

  // The data of `result`'s output `index`: its own, or all of its chunks.
  // INTERNAL naming the output when its chunks stopped short of total_bytes,
  // when it has neither (no output format encodes in 0 bytes), or both.
  // The view lives as long as `result` and this object.
  absl::StatusOr<absl::string_view> Data(const v1::GenerateResponse& result,
                                         int index) const;

 private:
  struct Output {
    int64_t total_bytes = 0;
    std::string data;
  };
  std::map<int, Output> outputs_;
};

}  // namespace ditserve::ditctl

#endif  // DITSERVE_CLIENTS_DITCTL_CHUNKED_OUTPUTS_H_
