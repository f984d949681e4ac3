#include "core/models/layers/feed_forward.h"

#include <torch/torch.h>

namespace ditserve::models {

GeluProjectionImpl::GeluProjectionImpl(int64_t dim_in, int64_t dim_out)
    : proj_(register_module("proj", Linear(dim_in, dim_out))) {}

at::Tensor GeluProjectionImpl::Forward(const at::Tensor& x) {
  return at::gelu(proj_->forward(x), "tanh");
}

FeedForwardImpl::FeedForwardImpl(int64_t dim, int64_t dim_out, int64_t mult)
    : activation_(dim, mult * dim), output_(mult * dim, dim_out) {
  torch::nn::ModuleList net;
  net->push_back(activation_);
  net->push_back(torch::nn::Dropout(0.0));
  net->push_back(output_);
  register_module("net", net);
}

at::Tensor FeedForwardImpl::Forward(const at::Tensor& x) {
  return output_->forward(activation_->Forward(x));
}

}  // namespace ditserve::models
