#include "core/parallel/group_collectives.h"

#include <torch/torch.h>

#include <exception>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_error.h"
#include "core/dist/wire_view.h"

namespace ditserve::parallel {
namespace {

// Posting a transfer only fails for a broken or misused group; c10::Error
// appends a backtrace after its first line, which the message leaves out.
base::StatusError PostingFailed(const Group& group, absl::string_view operation,
                                const std::exception& error) {
  const std::string what = error.what();
  return base::StatusError(absl::InternalError(absl::StrCat(
      operation, " on the ", group.context.group_name,
      " group could not be posted: ", what.substr(0, what.find('\n')))));
}

}  // namespace

void ThrowIfError(const absl::Status& status) {
  if (!status.ok()) throw base::StatusError(status);
}

at::Tensor AllToAll(const Group& group, absl::string_view operation,
                    const at::Tensor& input) {
  at::Tensor send = dist::WireView(input.contiguous());
  at::Tensor received = at::empty_like(send);
  // Empty split sizes ask c10d for equal slices of dim 0.
  std::vector<int64_t> equal_splits;
  ThrowIfError(dist::RunCollective(operation, group.context, [&] {
    return group.group->alltoall_base(received, send, equal_splits,
                                      equal_splits);
  }));
  return received.view(input.scalar_type());
}

at::Tensor AllGather(const Group& group, absl::string_view operation,
                     const at::Tensor& input, int64_t dim) {
  const at::Tensor contiguous = input.contiguous();
  std::vector<at::Tensor> outputs;
  for (int i = 0; i < group.size(); ++i) {
    outputs.push_back(at::empty_like(contiguous));
  }
  AllGatherInto(group, operation, contiguous, outputs);
  return at::cat(outputs, dim);
}

void AllGatherInto(const Group& group, absl::string_view operation,
                   const at::Tensor& input,
                   const std::vector<at::Tensor>& outputs) {
  std::vector<at::Tensor> inputs = {dist::WireView(input.contiguous())};
  std::vector<std::vector<at::Tensor>> wire_outputs = {
      dist::WireViews(outputs)};
  ThrowIfError(dist::RunCollective(operation, group.context, [&] {
    return group.group->allgather(wire_outputs, inputs);
  }));
}

c10::intrusive_ptr<c10d::Work> PostSend(const Group& group,
                                        absl::string_view operation,
                                        std::vector<at::Tensor>& tensors,
                                        int destination, int tag) {
  try {
    std::vector<at::Tensor> wire = dist::WireViews(tensors);
    return group.group->send(wire, destination, tag);
  } catch (const std::exception& error) {
    throw PostingFailed(group, operation, error);
  }
}

c10::intrusive_ptr<c10d::Work> PostReceive(const Group& group,
                                           absl::string_view operation,
                                           std::vector<at::Tensor>& tensors,
                                           int source, int tag) {
  try {
    std::vector<at::Tensor> wire = dist::WireViews(tensors);
    return group.group->recv(wire, source, tag);
  } catch (const std::exception& error) {
    throw PostingFailed(group, operation, error);
  }
}

std::vector<c10::intrusive_ptr<c10d::Work>> PostExchange(
    const Group& group, absl::string_view operation,
    std::vector<at::Tensor>& outgoing, int destination,
    std::vector<at::Tensor>& incoming, int source, int tag) {
#ifdef DITSERVE_WITH_NCCL
  if (group.group->getBackendName() == "nccl") {
    try {
      std::vector<at::Tensor> wire_out = dist::WireViews(outgoing);
      std::vector<at::Tensor> wire_in = dist::WireViews(incoming);
      // Inside the group c10d returns no work per transfer, one at its end.
      group.group->startCoalescing();
      group.group->recv(wire_in, source, tag);
      group.group->send(wire_out, destination, tag);
      return {group.group->endCoalescing()};
    } catch (const std::exception& error) {
      throw PostingFailed(group, operation, error);
    }
  }
#endif
  return {PostReceive(group, operation, incoming, source, tag),
          PostSend(group, operation, outgoing, destination, tag)};
}

void Wait(const Group& group, absl::string_view operation,
          const c10::intrusive_ptr<c10d::Work>& work) {
  ThrowIfError(
      dist::RunCollective(operation, group.context, [&] { return work; }));
}

}  // namespace ditserve::parallel
