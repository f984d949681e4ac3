#include "core/parallel/ring_attention.h"

#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_error.h"
#include "core/parallel/attention_accumulator.h"

namespace ditserve::parallel {
namespace {

// One tensor passed to the next rank while the previous rank's arrives.
// Gloo moves one tensor per send, so K/V and the mask travel separately.
struct Transfer {
  std::vector<at::Tensor> outgoing;
  std::vector<at::Tensor> incoming;
  std::vector<c10::intrusive_ptr<c10d::Work>> works;
};

Transfer Post(const Group& ring, const std::string& operation,
              const at::Tensor& tensor, int next, int previous, int tag) {
  Transfer transfer;
  transfer.outgoing = {tensor};
  transfer.incoming = {at::empty_like(tensor)};
  transfer.works = PostExchange(ring, operation, transfer.outgoing, next,
                                transfer.incoming, previous, tag);
  return transfer;
}

at::Tensor Complete(const Group& ring, const std::string& operation,
                    Transfer& transfer, int next, int previous) {
  const std::string exchange =
      absl::StrCat(operation, ": receive from ring rank ", previous,
                   " and send to ring rank ", next);
  for (const c10::intrusive_ptr<c10d::Work>& work : transfer.works) {
    Wait(ring, exchange, work);
  }
  return transfer.incoming[0];
}

}  // namespace

RingAttention::RingAttention(Group ring) : ring_(std::move(ring)) {}

at::Tensor RingAttention::Attend(const at::Tensor& q, const at::Tensor& k,
                                 const at::Tensor& v,
                                 const std::optional<at::Tensor>& key_mask) {
  if (k.sizes() != v.sizes()) {
    throw base::StatusError(absl::InvalidArgumentError(
        absl::StrCat("ring attention needs keys and values of one shape; got ",
                     c10::str(k.sizes()), " and ", c10::str(v.sizes()))));
  }
  const int size = ring_.size();
  const int next = (ring_.rank() + 1) % size;
  const int previous = (ring_.rank() + size - 1) % size;
  // K and V travel as one tensor; the mask as bytes, which every backend
  // can send.
  at::Tensor key_values = at::stack({k, v}).contiguous();
  std::optional<at::Tensor> mask;
  if (key_mask.has_value()) mask = key_mask->to(at::kByte).contiguous();

  AttentionAccumulator accumulator(q);
  for (int step = 0; step < size; ++step) {
    const bool pass_on = step + 1 < size;
    const std::string operation =
        absl::StrCat("ring attention exchange ", step + 1, " of ", size - 1);
    std::optional<Transfer> key_value_transfer;
    std::optional<Transfer> mask_transfer;
    // Posted before this step's math so the blocks travel meanwhile.
    if (pass_on) {
      key_value_transfer = Post(ring_, operation + " (K/V)", key_values, next,
                                previous, /*tag=*/2 * step);
      if (mask.has_value()) {
        mask_transfer = Post(ring_, operation + " (key mask)", *mask, next,
                             previous, /*tag=*/2 * step + 1);
      }
    }
    accumulator.AddBlock(key_values[0], key_values[1], mask);
    if (!pass_on) break;
    key_values = Complete(ring_, operation + " (K/V)", *key_value_transfer,
                          next, previous);
    if (mask_transfer.has_value()) {
      mask = Complete(ring_, operation + " (key mask)", *mask_transfer, next,
                      previous);
    }
  }
  return accumulator.Result();
}

}  // namespace ditserve::parallel
