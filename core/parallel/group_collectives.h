#ifndef DITSERVE_CORE_PARALLEL_GROUP_COLLECTIVES_H_
#define DITSERVE_CORE_PARALLEL_GROUP_COLLECTIVES_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/dist/collective.h"
#include "core/dist/process_group.h"

namespace ditserve::parallel {

// A process group with the context its waits are bounded and explained by.
struct Group {
  dist::ProcessGroupPtr group;
  dist::CollectiveContext context;

  int rank() const { return group->getRank(); }
  int size() const { return group->getSize(); }
};

// The collectives sequence parallelism needs, each waited for at most
// group.context.timeout. They throw base::StatusError (see
// core/base/status_error.h) naming `operation` and the group when the
// collective fails.

// Exchanges equal slices of dim 0: input [size, ...] sends slice i to group
// rank i; the result's slice i came from group rank i.
at::Tensor AllToAll(const Group& group, absl::string_view operation,
                    const at::Tensor& input);

// Every rank's `input` (same shape on all ranks) concatenated along `dim` in
// group-rank order.
at::Tensor AllGather(const Group& group, absl::string_view operation,
                     const at::Tensor& input, int64_t dim);
// Every rank's `input` received into `outputs` (one contiguous tensor of
// input's shape and type per group rank, in group-rank order).
void AllGatherInto(const Group& group, absl::string_view operation,
                   const at::Tensor& input,
                   const std::vector<at::Tensor>& outputs);

// Point-to-point transfers are posted first and waited for later, so a ring
// step computes while its blocks travel. `tensors` must stay alive until the
// wait returns. Posting throws base::StatusError (INTERNAL) when c10d refuses.
c10::intrusive_ptr<c10d::Work> PostSend(const Group& group,
                                        absl::string_view operation,
                                        std::vector<at::Tensor>& tensors,
                                        int destination, int tag);
c10::intrusive_ptr<c10d::Work> PostReceive(const Group& group,
                                           absl::string_view operation,
                                           std::vector<at::Tensor>& tensors,
                                           int source, int tag);
// A send of `outgoing` to `destination` and a receive into `incoming` from
// `source`, posted together; returns what to Wait for. On NCCL the two run as
// one group: posted apart, ranks that each receive before they send over the
// same communicator (a ring of two) would wait for each other.
std::vector<c10::intrusive_ptr<c10d::Work>> PostExchange(
    const Group& group, absl::string_view operation,
    std::vector<at::Tensor>& outgoing, int destination,
    std::vector<at::Tensor>& incoming, int source, int tag);
// Waits for a posted transfer at most group.context.timeout.
void Wait(const Group& group, absl::string_view operation,
          const c10::intrusive_ptr<c10d::Work>& work);

// Throws base::StatusError(status) unless `status` is OK.
void ThrowIfError(const absl::Status& status);

}  // namespace ditserve::parallel

#endif  // DITSERVE_CORE_PARALLEL_GROUP_COLLECTIVES_H_
