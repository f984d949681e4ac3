#ifndef DITSERVE_CORE_DIST_WIRE_VIEW_H_
#define DITSERVE_CORE_DIST_WIRE_VIEW_H_

// Gloo's collectives in LibTorch 1.13 refuse bfloat16 tensors ("Invalid
// scalar type"; of the 16-bit types they take only float16), although
// moving bytes needs no arithmetic in their dtype. The data collectives
// (all-to-all, gathers, send and receive; none of them reduces) pass
// bfloat16 tensors as float16 views of the same memory, so what a view
// receives lands in the tensor it views.

#include <ATen/core/Tensor.h>

#include <vector>

namespace ditserve::dist {

// A float16 view of a bfloat16 tensor; any other tensor itself.
at::Tensor WireView(const at::Tensor& tensor);
std::vector<at::Tensor> WireViews(const std::vector<at::Tensor>& tensors);

}  // namespace ditserve::dist

#endif  // DITSERVE_CORE_DIST_WIRE_VIEW_H_
