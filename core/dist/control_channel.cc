#include "core/dist/control_channel.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "core/config/config_digest.h"

namespace ditserve::dist {
namespace {

// What a mismatch message says about the message, e.g. `RunConfig
// (request_id "r1", sequence 4)`.
std::string Describe(const ControlMessage& message) {
  std::string text = ControlKindName(message.kind);
  if (message.kind == v1::CONTROL_KIND_RUN) {
    absl::StrAppend(&text, " (request_id \"", message.run.config().request_id(),
                    "\", sequence ", message.run.config().sequence_number(),
                    ")");
  }
  return text;
}

}  // namespace

ControlChannel::ControlChannel(ProcessGroupPtr group, int rank, int world_size,
                               Watchdog* watchdog,
                               ControlChannelOptions options)
    : group_(std::move(group)),
      rank_(rank),
      world_size_(world_size),
      collective_{.group_name = "control",
                  .timeout = options.timeout,
                  .watchdog = watchdog},
      options_(std::move(options)) {}

absl::StatusOr<ControlMessage> ControlChannel::Send(
    const ControlMessage& message) {
  if (rank_ != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("rank ", rank_,
                     " cannot send control messages; only "
                     "rank 0 does"));
  }
  if (!IsKnownControlKind(message.kind)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot send ", ControlKindName(message.kind)));
  }
  return Exchange(&message);
}

absl::StatusOr<ControlMessage> ControlChannel::Receive() {
  if (rank_ == 0) {
    return absl::FailedPreconditionError(
        "rank 0 sends control messages; it cannot receive them");
  }
  return Exchange(nullptr);
}

absl::StatusOr<ControlMessage> ControlChannel::Exchange(
    const ControlMessage* outgoing) {
  // Nothing above the host's run thread or a worker's loop catches, and a
  // payload of up to max_message_bytes, sized by rank 0's header, may not be
  // allocatable on a rank short of memory. As a Status the failure ends the
  // generation like any failed exchange, and the group is re-formed, rather
  // than the process.
  return base::GuardedAs(
      absl::StatusCode::kResourceExhausted,
      absl::StrCat("rank ", rank_, " exchanging a control frame"),
      [&] { return ExchangeFrame(outgoing); });
}

absl::StatusOr<ControlMessage> ControlChannel::ExchangeFrame(
    const ControlMessage* outgoing) {
  RETURN_IF_ERROR(FinishStepDecision());
  std::string payload;
  at::Tensor header = at::zeros({2}, at::kLong);
  if (outgoing != nullptr) {
    payload = config::SerializeDeterministic(ControlBody(*outgoing));
    header[0] = static_cast<int64_t>(outgoing->kind);
    header[1] = static_cast<int64_t>(payload.size());
  }
  std::vector<at::Tensor> header_tensors = {header};
  absl::Status status =
      RunCollective("broadcast of a control frame header", collective_,
                    [&] { return group_->broadcast(header_tensors); });
  if (!status.ok()) return status;

  const int64_t kind = header[0].item<int64_t>();
  const int64_t length = header[1].item<int64_t>();
  // Every rank sees the same header, so every rank refuses it alike and
  // none is left waiting for the payload.
  status = CheckControlFrameHeader(kind, length, options_.max_message_bytes);
  if (!status.ok()) return status;

  const auto control_kind = static_cast<v1::ControlKind>(kind);
  std::string received;
  if (length > 0) {
    at::Tensor bytes = at::empty({length}, at::kByte);
    if (outgoing != nullptr) {
      std::memcpy(bytes.data_ptr<uint8_t>(), payload.data(), payload.size());
    }
    std::vector<at::Tensor> payload_tensors = {bytes};
    status = RunCollective(
        absl::StrCat("broadcast of a ", ControlKindName(control_kind),
                     " payload of ", length, " bytes"),
        collective_, [&] { return group_->broadcast(payload_tensors); });
    if (!status.ok()) return status;
    received.assign(reinterpret_cast<const char*>(bytes.data_ptr<uint8_t>()),
                    static_cast<size_t>(length));
  }

  ControlMessage message = DecodeControlPayload(
      control_kind, std::move(received), options_.alter_parsed_run_config);
  status = AgreeOnDigest(message);
  if (!status.ok()) return status;
  return message;
}

absl::Status ControlChannel::AgreeOnDigest(ControlMessage& message) {
  at::Tensor local = at::empty({1}, at::kLong);
  local[0] = static_cast<int64_t>(message.digest);
  std::vector<std::vector<at::Tensor>> gathered(1);
  for (int rank = 0; rank < world_size_; ++rank) {
    gathered[0].push_back(at::empty({1}, at::kLong));
  }
  std::vector<at::Tensor> inputs = {local};
  absl::Status status = RunCollective(
      absl::StrCat("digest all-gather after ", ControlKindName(message.kind)),
      collective_, [&] { return group_->allgather(gathered, inputs); });
  if (!status.ok()) return status;

  std::vector<uint64_t> digests;
  for (const at::Tensor& tensor : gathered[0]) {
    digests.push_back(static_cast<uint64_t>(tensor.item<int64_t>()));
  }
  std::vector<std::string> mismatches;
  for (int rank = 1; rank < world_size_; ++rank) {
    if (digests[rank] == digests[0]) continue;
    mismatches.push_back(absl::StrCat(
        "rank ", rank,
        digests[rank] == kUnparsedDigest ? " could not parse the payload"
                                         : " parsed digest ",
        digests[rank] == kUnparsedDigest ? ""
                                         : config::DigestHex(digests[rank])));
  }
  if (mismatches.empty()) return absl::OkStatus();
  message.agreement = absl::InternalError(
      absl::StrCat("digest mismatch after broadcast of ", Describe(message),
                   ": rank 0 sent ", config::DigestHex(digests[0]), " but ",
                   absl::StrJoin(mismatches, "; ")));
  return absl::OkStatus();
}

absl::StatusOr<v1::StepDecision> ControlChannel::BroadcastStepDecision(
    v1::StepDecision decision) {
  RETURN_IF_ERROR(FinishStepDecision());
  at::Tensor value = at::empty({1}, at::kLong);
  value[0] = static_cast<int64_t>(decision);
  std::vector<at::Tensor> tensors = {value};
  if (rank_ == 0) {
    PendingDecision pending{.tensors = tensors};
    ASSIGN_OR_RETURN(
        pending.work,
        StartCollective("broadcast of a step decision", collective_,
                        [&] { return group_->broadcast(pending.tensors); }));
    pending_decision_ = std::move(pending);
    return decision;
  }
  absl::Status status =
      RunCollective("broadcast of a step decision", collective_,
                    [&] { return group_->broadcast(tensors); });
  if (!status.ok()) return status;
  const int64_t received = value.item<int64_t>();
  if (!v1::StepDecision_IsValid(static_cast<int>(received))) {
    return absl::InternalError(
        absl::StrCat("step decision ", received, " is not a StepDecision"));
  }
  return static_cast<v1::StepDecision>(received);
}

absl::Status ControlChannel::FinishStepDecision() {
  if (!pending_decision_.has_value()) return absl::OkStatus();
  absl::Status status = WaitCollective("delivery of a step decision",
                                       collective_, *pending_decision_->work);
  pending_decision_.reset();
  return status;
}

absl::StatusOr<std::vector<std::string>> ControlChannel::AllGatherBytes(
    absl::string_view operation, const std::string& bytes) {
  // As Exchange: the buffers are world_size times the longest peer's bytes.
  return base::GuardedAs(
      absl::StatusCode::kResourceExhausted,
      absl::StrCat("rank ", rank_, " in the all-gather of ", operation),
      [&] { return GatherBytes(operation, bytes); });
}

absl::StatusOr<std::vector<std::string>> ControlChannel::GatherBytes(
    absl::string_view operation, const std::string& bytes) {
  RETURN_IF_ERROR(FinishStepDecision());
  // Lengths first, so every rank can size the padded byte buffers.
  at::Tensor length = at::empty({1}, at::kLong);
  length[0] = static_cast<int64_t>(bytes.size());
  std::vector<std::vector<at::Tensor>> lengths(1);
  for (int rank = 0; rank < world_size_; ++rank) {
    lengths[0].push_back(at::empty({1}, at::kLong));
  }
  std::vector<at::Tensor> length_input = {length};
  absl::Status status = RunCollective(
      absl::StrCat("length all-gather of ", operation), collective_,
      [&] { return group_->allgather(lengths, length_input); });
  if (!status.ok()) return status;
  int64_t longest = 1;
  for (int rank = 0; rank < world_size_; ++rank) {
    const int64_t peer_length = lengths[0][rank].item<int64_t>();
    // Every rank sees the same lengths, so every rank refuses them alike; a
    // negative one would become a size_t near 2^64 below.
    if (peer_length < 0) {
      return absl::InternalError(absl::StrCat(
          operation, ": rank ", rank, " announced ", peer_length, " bytes"));
    }
    longest = std::max(longest, peer_length);
  }
  if (longest > options_.max_message_bytes) {
    return absl::InternalError(absl::StrCat(operation, " of ", longest,
                                            " bytes exceeds the limit of ",
                                            options_.max_message_bytes));
  }

  at::Tensor padded = at::zeros({longest}, at::kByte);
  std::memcpy(padded.data_ptr<uint8_t>(), bytes.data(), bytes.size());
  std::vector<std::vector<at::Tensor>> gathered(1);
  for (int rank = 0; rank < world_size_; ++rank) {
    gathered[0].push_back(at::empty({longest}, at::kByte));
  }
  std::vector<at::Tensor> input = {padded};
  status = RunCollective(absl::StrCat("all-gather of ", operation), collective_,
                         [&] { return group_->allgather(gathered, input); });
  if (!status.ok()) return status;
  std::vector<std::string> result;
  for (int rank = 0; rank < world_size_; ++rank) {
    result.emplace_back(
        reinterpret_cast<const char*>(gathered[0][rank].data_ptr<uint8_t>()),
        static_cast<size_t>(lengths[0][rank].item<int64_t>()));
  }
  return result;
}

}  // namespace ditserve::dist
