// ditserve-bench-cpu-gemm: milliseconds per float32 matrix product of the
// shapes ditserve's transformers run, through core/models/layers/cpu_gemm.h
// (oneDNN's sgemm) and through ATen's at::linear / at::matmul (the BLAS
// library, OpenBLAS on Debian), alternating call by call. Medians; prints
// one JSON document with the ratio cpu_gemm / ATen (< 1: cpu_gemm is
// faster) and the largest difference between the two results.
//
//   ditserve-bench-cpu-gemm [--threads 1,2] [--repeats 5]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "bench/positive_list.h"
#include "core/base/allocator_tuning.h"
#include "core/engine/compute_threads.h"
#include "core/models/layers/cpu_gemm.h"
#include "nlohmann/json.hpp"

ABSL_FLAG(std::vector<std::string>, threads,
          (std::vector<std::string>{"1", "2"}),
          "intra-op thread counts, comma separated");
ABSL_FLAG(int, repeats, 5, "timed calls per side (after one warm-up each)");

namespace ditserve::bench {
namespace {

// A linear layer (x [rows, in] by weight [out, in]) or an attention
// product (q [heads, rows, head_dim] by k [heads, keys, head_dim]^T).
struct Shape {
  std::string name;
  bool attention;
  int64_t rows;
  int64_t inner;
  int64_t cols;
  int64_t heads = 1;
};

// The `small` FLUX checkpoint at 512² (1024 image + 64 text tokens, 256
// wide, 4 heads of 64) and FLUX.1-dev at 1024² (4096 + 512 tokens, 3072
// wide, 24 heads of 128), whose attention takes its queries in chunks of
// about 256 MiB of scores (attention.h): 512 rows here.
std::vector<Shape> Shapes() {
  return {
      {"flux_small_512_attention_projection", false, 1088, 256, 256},
      {"flux_small_512_mlp_up", false, 1088, 256, 1024},
      {"flux_small_512_mlp_down", false, 1088, 1024, 256},
      {"flux_small_512_attention_scores", true, 1088, 64, 1088, 4},
      {"flux_dev_1024_attention_projection", false, 4608, 3072, 3072},
      {"flux_dev_1024_attention_scores", true, 512, 128, 4608, 24},
  };
}

double Milliseconds(const std::function<at::Tensor()>& product,
                    at::Tensor* result) {
  const auto start = std::chrono::steady_clock::now();
  *result = product();
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

nlohmann::json Measure(const Shape& shape, int repeats) {
  torch::manual_seed(0);
  at::Tensor a = torch::randn({shape.heads, shape.rows, shape.inner});
  at::Tensor b = torch::randn({shape.heads, shape.cols, shape.inner});
  at::Tensor bias = torch::randn({shape.cols});
  std::function<at::Tensor()> ours;
  std::function<at::Tensor()> aten;
  if (shape.attention) {
    ours = [&] { return models::BatchedMatmul(a, b, /*transpose_b=*/true); };
    aten = [&] { return at::matmul(a, b.transpose(-2, -1)); };
  } else {
    a = a[0];
    b = b[0];
    ours = [&] { return models::ApplyLinear(a, b, bias); };
    aten = [&] { return at::linear(a, b, bias); };
  }
  at::Tensor ours_result;
  at::Tensor aten_result;
  Milliseconds(ours, &ours_result);
  Milliseconds(aten, &aten_result);
  std::vector<double> ours_ms;
  std::vector<double> aten_ms;
  for (int i = 0; i < repeats; ++i) {
    ours_ms.push_back(Milliseconds(ours, &ours_result));
    aten_ms.push_back(Milliseconds(aten, &aten_result));
  }
  const double flops = 2.0 * static_cast<double>(shape.heads) * shape.rows *
                       shape.inner * shape.cols;
  const double ours_median = Median(ours_ms);
  const double aten_median = Median(aten_ms);
  return {{"shape", shape.name},
          {"cpu_gemm_ms", ours_median},
          {"aten_ms", aten_median},
          {"ratio", ours_median / aten_median},
          {"cpu_gemm_gflops", flops / ours_median / 1e6},
          {"aten_gflops", flops / aten_median / 1e6},
          {"max_abs_difference",
           (ours_result - aten_result).abs().max().item<double>()}};
}

int Run() {
  base::KeepFreedMemoryForReuse();
  c10::InferenceMode inference;
  nlohmann::json measurements = nlohmann::json::array();
  absl::StatusOr<std::vector<int64_t>> thread_counts =
      ParsePositiveList(absl::GetFlag(FLAGS_threads), "threads");
  if (!thread_counts.ok()) {
    std::cerr << thread_counts.status() << "\n";
    return 2;
  }
  for (const int64_t threads : *thread_counts) {
    engine::SetComputeThreads(static_cast<int>(threads));
    for (const Shape& shape : Shapes()) {
      nlohmann::json measurement =
          Measure(shape, std::max(1, absl::GetFlag(FLAGS_repeats)));
      measurement["threads"] = threads;
      measurements.push_back(std::move(measurement));
    }
  }
  std::cout << nlohmann::json{{"measurements", measurements}}.dump(2) << "\n";
  return 0;
}

}  // namespace
}  // namespace ditserve::bench

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "float32 matrix products: oneDNN (cpu_gemm) against ATen");
  absl::ParseCommandLine(argc, argv);
  return ditserve::bench::Run();
}
