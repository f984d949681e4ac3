#ifndef DITSERVE_CORE_ENGINE_RECEIVE_BUFFERS_H_
#define DITSERVE_CORE_ENGINE_RECEIVE_BUFFERS_H_

#include <ATen/core/Tensor.h>
#include <c10/core/TensorOptions.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/engine/buffer_plan.h"

namespace ditserve::engine {

// The tensors of one BufferPlan. Every receive goes through ForIncoming,
// which refuses data whose shape is not the planned one.
class ReceiveBuffers {
 public:
  // Allocates every buffer of `plan` (zeroed) with `options`.
  static absl::StatusOr<ReceiveBuffers> Allocate(
      const BufferPlan& plan, const c10::TensorOptions& options);

  // The planned buffer `name` for data of `incoming_shape`. INTERNAL when
  // this rank has no such buffer or the shapes differ; the message names the
  // buffer, both shapes and the config fields that sized the buffer.
  absl::StatusOr<at::Tensor> ForIncoming(
      absl::string_view name, const std::vector<int64_t>& incoming_shape);

  // The planned buffer `name` for data this rank produces itself; INTERNAL
  // when there is none.
  absl::StatusOr<at::Tensor> Get(absl::string_view name);

  const BufferPlan& plan() const { return plan_; }
  // Where and in which dtype the buffers are.
  const c10::TensorOptions& options() const { return options_; }

 private:
  BufferPlan plan_;
  c10::TensorOptions options_;
  std::map<std::string, at::Tensor, std::less<>> tensors_;
};

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_RECEIVE_BUFFERS_H_
