#include "core/parallel/ulysses_attention.h"

#include <torch/torch.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_error.h"

namespace ditserve::parallel {

UlyssesAttention::UlyssesAttention(Group ulysses,
                                   std::shared_ptr<models::Attention> inner)
    : ulysses_(std::move(ulysses)), inner_(std::move(inner)) {}

at::Tensor UlyssesAttention::Attend(const at::Tensor& q, const at::Tensor& k,
                                    const at::Tensor& v,
                                    const std::optional<at::Tensor>& key_mask) {
  if (q.dim() != 4 || q.sizes() != k.sizes() || q.sizes() != v.sizes()) {
    throw base::StatusError(absl::InvalidArgumentError(absl::StrCat(
        "Ulysses attention needs q, k, v of one shape [B, H, S, D]; got ",
        c10::str(q.sizes()), ", ", c10::str(k.sizes()), " and ",
        c10::str(v.sizes()))));
  }
  const int64_t degree = ulysses_.size();
  const int64_t batch = q.size(0);
  const int64_t heads = q.size(1);
  const int64_t block = q.size(2);
  const int64_t head_dim = q.size(3);
  if (heads % degree != 0) {
    throw base::StatusError(absl::InvalidArgumentError(absl::StrCat(
        "Ulysses attention needs the attention heads (", heads,
        ") to be a multiple of the ulysses degree (", degree, ")")));
  }
  const int64_t local_heads = heads / degree;

  // [3, B, H, S_block, D] -> [u, 3, B, H/u, S_block, D]: slice j holds the
  // heads Ulysses rank j attends over. One all-to-all for q, k and v.
  const at::Tensor outgoing =
      at::stack({q, k, v})
          .reshape({3, batch, degree, local_heads, block, head_dim})
          .permute({2, 0, 1, 3, 4, 5});
  // Slice j of the result is rank j's sequence block of this rank's heads;
  // -> [3, B, H/u, u * S_block, D].
  const at::Tensor gathered =
      AllToAll(ulysses_, "Ulysses all-to-all of q, k, v", outgoing)
          .permute({1, 2, 3, 0, 4, 5})
          .reshape({3, batch, local_heads, degree * block, head_dim});

  std::optional<at::Tensor> gathered_mask;
  if (key_mask.has_value()) {
    gathered_mask = AllGather(ulysses_, "Ulysses all-gather of the key mask",
                              key_mask->to(at::kByte), /*dim=*/1)
                        .to(at::kBool);
  }
  const at::Tensor output =
      inner_->Attend(gathered[0], gathered[1], gathered[2], gathered_mask);

  // [B, H/u, u * S_block, D] -> [u, B, H/u, S_block, D]: slice j goes back
  // to the rank that holds sequence block j.
  const at::Tensor returning =
      output.reshape({batch, local_heads, degree, block, head_dim})
          .permute({2, 0, 1, 3, 4});
  // Slice j of the result is this block's output for rank j's heads.
  return AllToAll(ulysses_, "Ulysses all-to-all of the attention output",
                  returning)
      .permute({1, 0, 2, 3, 4})
      .reshape({batch, heads, block, head_dim});
}

}  // namespace ditserve::parallel
