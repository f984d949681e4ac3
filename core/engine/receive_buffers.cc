#include "core/engine/receive_buffers.h"

#include <ATen/ATen.h>

#include <exception>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"

namespace ditserve::engine {

absl::StatusOr<ReceiveBuffers> ReceiveBuffers::Allocate(
    const BufferPlan& plan, const c10::TensorOptions& options) {
  ReceiveBuffers buffers;
  buffers.options_ = options;
  buffers.plan_ = plan;
  for (const BufferSpec& spec : plan.buffers) {
    RETURN_IF_ERROR(base::GuardedAs(
        absl::StatusCode::kResourceExhausted,
        absl::StrCat("allocating ", spec.name, " ", ShapeString(spec.shape),
                     " (sized by ", spec.sized_by, ") failed"),
        [&] { buffers.tensors_[spec.name] = at::zeros(spec.shape, options); }));
  }
  return buffers;
}

absl::StatusOr<at::Tensor> ReceiveBuffers::ForIncoming(
    absl::string_view name, const std::vector<int64_t>& incoming_shape) {
  const BufferSpec* spec = plan_.Find(name);
  if (spec == nullptr) {
    return absl::InternalError(
        absl::StrCat("received ", ShapeString(incoming_shape), " for buffer ",
                     name, ", which this rank's plan does not have"));
  }
  if (spec->shape != incoming_shape) {
    return absl::InternalError(absl::StrCat(
        "received ", ShapeString(incoming_shape), " into ", name,
        ", planned as ", ShapeString(spec->shape), " from ", spec->sized_by));
  }
  return tensors_.find(name)->second;
}

absl::StatusOr<at::Tensor> ReceiveBuffers::Get(absl::string_view name) {
  auto found = tensors_.find(name);
  if (found == tensors_.end()) {
    return absl::InternalError(
        absl::StrCat("this rank's plan has no buffer ", name));
  }
  return found->second;
}

}  // namespace ditserve::engine
