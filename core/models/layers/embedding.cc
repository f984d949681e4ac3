#include "core/models/layers/embedding.h"

#include <torch/torch.h>

#include "core/models/layers/parameter_init.h"

namespace ditserve::models {

EmbeddingImpl::EmbeddingImpl(int64_t count, int64_t dim)
    : weight(register_parameter("weight", UnwrittenParameter({count, dim}))) {
  DrawEmbedding(weight);
}

at::Tensor EmbeddingImpl::forward(const at::Tensor& ids) {
  return at::embedding(weight, ids);
}

}  // namespace ditserve::models
