#ifndef DITSERVE_CORE_MODELS_LAYERS_EMBEDDING_H_
#define DITSERVE_CORE_MODELS_LAYERS_EMBEDDING_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

namespace ditserve::models {

// torch::nn::Embedding with its parameter (`weight` [count, dim]) left
// unwritten outside a RandomParameters scope (parameter_init.h). A drop-in
// replacement, so `forward` keeps torch::nn's name.
class EmbeddingImpl : public torch::nn::Module {
 public:
  EmbeddingImpl(int64_t count, int64_t dim);

  // The rows of `weight` that the integer tensor `ids` names.
  at::Tensor forward(const at::Tensor& ids);

  at::Tensor weight;
};
TORCH_MODULE(Embedding);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_LAYERS_EMBEDDING_H_
