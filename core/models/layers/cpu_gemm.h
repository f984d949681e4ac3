#ifndef DITSERVE_CORE_MODELS_LAYERS_CPU_GEMM_H_
#define DITSERVE_CORE_MODELS_LAYERS_CPU_GEMM_H_

#include <ATen/core/Tensor.h>

namespace ditserve::models {

// The matrix products of linear layers and attention, on the GEMM that is
// fastest for float32 on a CPU. LibTorch 1.13 sends float32 matmul to the
// BLAS library (OpenBLAS), whose 0.3.21 kernels stop at AVX2; oneDNN's
// sgemm, which LibTorch already loads for its convolutions, dispatches to
// AVX-512 where the CPU has it (bench/cpu_gemm_bench.cc). Other dtypes,
// CUDA, autograd and a build without oneDNN take ATen's at::linear and
// at::matmul, as does every call when the environment has
// DITSERVE_CPU_GEMM=aten, which is how benchmarks compare the two.

// Whether oneDNN takes float32 work on these operands, as above: both on
// the CPU in float32, outside autograd, in a build with oneDNN and without
// DITSERVE_CPU_GEMM=aten.
bool OneDnnTakes(const at::Tensor& a, const at::Tensor& b);

// x [..., K] times weight [N, K] transposed, plus bias [N] when defined.
at::Tensor ApplyLinear(const at::Tensor& x, const at::Tensor& weight,
                       const at::Tensor& bias);

// a [..., M, K] times b [..., K, N] (or b [..., N, K] transposed when
// `transpose_b`), with equal leading dimensions.
at::Tensor BatchedMatmul(const at::Tensor& a, const at::Tensor& b,
                         bool transpose_b);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_LAYERS_CPU_GEMM_H_
