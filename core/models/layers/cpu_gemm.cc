#include "core/models/layers/cpu_gemm.h"

#include <ATen/Functions.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifdef DITSERVE_ONEDNN_GEMM
#include <dnnl.h>
#endif

namespace ditserve::models {
namespace {

#ifdef DITSERVE_ONEDNN_GEMM

bool OneDnnChosen() {
  static const bool chosen = [] {
    const char* choice = std::getenv("DITSERVE_CPU_GEMM");
    return choice == nullptr || std::strcmp(choice, "aten") != 0;
  }();
  return chosen;
}

// How far apart sgemm finds the rows of `matrices` [..., rows, columns].
// A single row's stride can be anything, even in a contiguous tensor.
int64_t RowStride(const at::Tensor& matrices) {
  return matrices.size(-2) > 1 ? matrices.stride(-2) : matrices.size(-1);
}

// A matrix operand as sgemm reads it: each row contiguous, RowStride apart.
at::Tensor WithContiguousRows(const at::Tensor& matrices) {
  const bool rows_contiguous =
      (matrices.stride(-1) == 1 || matrices.size(-1) == 1) &&
      RowStride(matrices) >= matrices.size(-1);
  return rows_contiguous ? matrices : matrices.contiguous();
}

// Element offsets of each matrix of `tensor`'s leading dimensions, in
// row-major order of those dimensions.
std::vector<int64_t> MatrixOffsets(const at::Tensor& tensor) {
  std::vector<int64_t> offsets = {0};
  for (int64_t dim = tensor.dim() - 3; dim >= 0; --dim) {
    std::vector<int64_t> expanded;
    expanded.reserve(offsets.size() * tensor.size(dim));
    for (int64_t index = 0; index < tensor.size(dim); ++index) {
      for (const int64_t offset : offsets) {
        expanded.push_back(index * tensor.stride(dim) + offset);
      }
    }
    offsets = std::move(expanded);
  }
  return offsets;
}

// out [..., M, N] (contiguous) = a op(b) + beta * out, matrix by matrix.
void Sgemm(const at::Tensor& a, const at::Tensor& b, bool transpose_b,
           float beta, const at::Tensor& out) {
  // oneDNN sizes its OpenMP team by the calling thread's setting, which
  // LibTorch sets per thread on first use (the host computes on a thread of
  // its own).
  at::internal::lazy_init_num_threads();
  const int64_t m = a.size(-2);
  const int64_t k = a.size(-1);
  const int64_t n = out.size(-1);
  const std::vector<int64_t> a_offsets = MatrixOffsets(a);
  const std::vector<int64_t> b_offsets = MatrixOffsets(b);
  const float* a_data = a.data_ptr<float>();
  const float* b_data = b.data_ptr<float>();
  float* out_data = out.data_ptr<float>();
  for (size_t matrix = 0; matrix < a_offsets.size(); ++matrix) {
    const dnnl_status_t status = dnnl_sgemm(
        'N', transpose_b ? 'T' : 'N', m, n, k, 1.0f, a_data + a_offsets[matrix],
        RowStride(a), b_data + b_offsets[matrix], RowStride(b), beta,
        out_data + matrix * m * n, n);
    TORCH_CHECK(status == dnnl_success, "oneDNN sgemm failed with status ",
                static_cast<int>(status), " for ", m, "x", k, " by ", k, "x",
                n);
  }
}

#endif  // DITSERVE_ONEDNN_GEMM

}  // namespace

bool OneDnnTakes(const at::Tensor& a, const at::Tensor& b) {
#ifdef DITSERVE_ONEDNN_GEMM
  if (!OneDnnChosen() || a.numel() == 0 || b.numel() == 0) return false;
  for (const at::Tensor* operand : {&a, &b}) {
    if (!operand->device().is_cpu() || operand->scalar_type() != at::kFloat) {
      return false;
    }
  }
  return !(c10::GradMode::is_enabled() &&
           (a.requires_grad() || b.requires_grad()));
#else
  return false;
#endif
}

at::Tensor ApplyLinear(const at::Tensor& x, const at::Tensor& weight,
                       const at::Tensor& bias) {
#ifdef DITSERVE_ONEDNN_GEMM
  if (OneDnnTakes(x, weight) &&
      (!bias.defined() || bias.scalar_type() == at::kFloat)) {
    const int64_t in_features = x.size(-1);
    const int64_t out_features = weight.size(0);
    const at::Tensor rows = WithContiguousRows(x.reshape({-1, in_features}));
    std::vector<int64_t> out_sizes = x.sizes().vec();
    out_sizes.back() = out_features;
    at::Tensor out = at::empty({rows.size(0), out_features}, x.options());
    if (bias.defined()) out.copy_(bias);
    Sgemm(rows, WithContiguousRows(weight), /*transpose_b=*/true,
          bias.defined() ? 1.0f : 0.0f, out);
    return out.view(out_sizes);
  }
#endif
  return at::linear(x, weight, bias);
}

at::Tensor BatchedMatmul(const at::Tensor& a, const at::Tensor& b,
                         bool transpose_b) {
#ifdef DITSERVE_ONEDNN_GEMM
  if (OneDnnTakes(a, b) && a.dim() == b.dim() &&
      a.sizes().slice(0, a.dim() - 2) == b.sizes().slice(0, b.dim() - 2)) {
    std::vector<int64_t> out_sizes = a.sizes().vec();
    out_sizes.back() = transpose_b ? b.size(-2) : b.size(-1);
    at::Tensor out = at::empty(out_sizes, a.options());
    Sgemm(WithContiguousRows(a), WithContiguousRows(b), transpose_b, 0.0f, out);
    return out;
  }
#endif
  return at::matmul(a, transpose_b ? b.transpose(-2, -1) : b);
}

}  // namespace ditserve::models
