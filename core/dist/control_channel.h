#ifndef DITSERVE_CORE_DIST_CONTROL_CHANNEL_H_
#define DITSERVE_CORE_DIST_CONTROL_CHANNEL_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/dist/collective.h"
#include "core/dist/control_frame.h"
#include "core/dist/process_group.h"
#include "ditserve/v1/control.pb.h"

namespace ditserve::dist {

struct ControlChannelOptions {
  // Longest wait of any one collective; idle ranks wait in a broadcast, so
  // this must exceed the host's ping interval.
  std::chrono::milliseconds timeout{30000};
  // Frames announcing more bytes than this are refused on every rank.
  int64_t max_message_bytes = int64_t{64} << 20;
  // Test-only fault injection: when set, called with the RunConfig this rank
  // parsed, before its digest is computed.
  std::function<void(v1::RunConfig&)> alter_parsed_run_config;
};

// Rank 0 broadcasts framed control messages over the CPU control group: an
// int64 tensor {kind, length}, then `length` bytes. Every rank, rank 0
// included, parses the bytes, digests the parsed message and all-gathers the
// digests, so every rank learns whether all ranks hold the same message
// before any tensor collective runs. Not thread-safe: one caller per rank at
// a time.
class ControlChannel {
 public:
  // `group` spans all `world_size` ranks; `watchdog` names hung and dead
  // ranks (may be null).
  ControlChannel(ProcessGroupPtr group, int rank, int world_size,
                 Watchdog* watchdog, ControlChannelOptions options);

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }

  // Rank 0: serialises `message` deterministically (its `kind` and the
  // matching body) and sends it. Other ranks: Receive(). Errors mean the
  // group is broken (a lost rank, a timeout, a malformed frame); a digest
  // mismatch is reported in ControlMessage::agreement instead.
  absl::StatusOr<ControlMessage> Send(const ControlMessage& message);
  absl::StatusOr<ControlMessage> Receive();

  // At a denoising-step boundary: every rank returns rank 0's `decision`
  // (the value passed on other ranks is ignored). Rank 0 does not wait for
  // the others to take it, since a pipeline's later stages reach the same
  // boundary later: it waits before its next exchange or step decision,
  // whose Status then carries a failed delivery.
  absl::StatusOr<v1::StepDecision> BroadcastStepDecision(
      v1::StepDecision decision);

  // Every rank's `bytes`, indexed by rank; `operation` names it in errors.
  // Errors mean the group is broken, as Send's do.
  absl::StatusOr<std::vector<std::string>> AllGatherBytes(
      absl::string_view operation, const std::string& bytes);

 private:
  // Send (outgoing set, rank 0) or Receive (outgoing null): ExchangeFrame,
  // with what it throws as a Status.
  absl::StatusOr<ControlMessage> Exchange(const ControlMessage* outgoing);
  absl::StatusOr<ControlMessage> ExchangeFrame(const ControlMessage* outgoing);
  // AllGatherBytes, throwing what its buffers throw.
  absl::StatusOr<std::vector<std::string>> GatherBytes(
      absl::string_view operation, const std::string& bytes);
  // All-gathers the digests into message.agreement; fails only when the
  // all-gather does.
  absl::Status AgreeOnDigest(ControlMessage& message);
  // Rank 0: waits until the other ranks have its last step decision.
  absl::Status FinishStepDecision();

  // Rank 0's step decision on its way: the broadcast and its tensor, which
  // must live until the broadcast completes.
  struct PendingDecision {
    c10::intrusive_ptr<c10d::Work> work;
    std::vector<at::Tensor> tensors;
  };

  ProcessGroupPtr group_;
  int rank_;
  int world_size_;
  CollectiveContext collective_;
  ControlChannelOptions options_;
  std::optional<PendingDecision> pending_decision_;
};

}  // namespace ditserve::dist

#endif  // DITSERVE_CORE_DIST_CONTROL_CHANNEL_H_
