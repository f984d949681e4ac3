#include "core/engine/rank_loop.h"

#include <c10/core/DeviceGuard.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "core/config/config_digest.h"
#include "core/dist/collective_failure.h"
#include "core/engine/rank_memory.h"
#include "core/engine/rank_report.h"
#include "spdlog/spdlog.h"

namespace ditserve::engine {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

RankLoop::RankLoop(dist::ControlChannel& channel, Engine& engine,
                   RankLoopOptions options)
    : channel_(channel), engine_(engine), options_(std::move(options)) {}

absl::StatusOr<RequestOutcome> RankLoop::RunOnAllRanks(
    const v1::InputConfig& config, RunObserver* observer) {
  StageTimings timings;
  dist::ControlMessage run;
  run.kind = v1::CONTROL_KIND_RUN;
  *run.run.mutable_config() = config;
  absl::StatusOr<dist::ControlMessage> sent;
  {
    ScopedStageTimer timer(timings, Stage::kBroadcast);
    sent = channel_.Send(run);
  }
  RETURN_IF_ERROR(sent.status());
  RequestOutcome outcome;
  RETURN_IF_ERROR(Serve(*sent, observer, timings, outcome));
  return outcome;
}

absl::Status RankLoop::Ping() {
  dist::ControlMessage ping;
  ping.kind = v1::CONTROL_KIND_PING;
  ping.ping.set_sequence(++ping_sequence_);
  ping.ping.set_sent_unix_micros(absl::ToUnixMicros(absl::Now()));
  return channel_.Send(ping).status();
}

absl::Status RankLoop::Shutdown(const std::string& reason) {
  dist::ControlMessage shutdown;
  shutdown.kind = v1::CONTROL_KIND_SHUTDOWN;
  shutdown.shutdown.set_reason(reason);
  RETURN_IF_ERROR(channel_.Send(shutdown).status());
  spdlog::info("rank 0: group shut down: {}", reason);
  return absl::OkStatus();
}

absl::Status RankLoop::Follow() {
  while (true) {
    ASSIGN_OR_RETURN(dist::ControlMessage message, channel_.Receive());
    switch (message.kind) {
      case v1::CONTROL_KIND_PING:
        break;
      case v1::CONTROL_KIND_SHUTDOWN:
        spdlog::info("rank {}: shutting down: {}", channel_.rank(),
                     message.shutdown.reason());
        return absl::OkStatus();
      case v1::CONTROL_KIND_RUN: {
        StageTimings timings;
        RequestOutcome outcome;
        absl::Status group = Serve(message, nullptr, timings, outcome);
        if (!group.ok()) return group;
        break;
      }
      default:
        return absl::InternalError(absl::StrCat(
            "rank ", channel_.rank(), " received ",
            dist::ControlKindName(message.kind), " it cannot handle"));
    }
  }
}

absl::Status RankLoop::Serve(const dist::ControlMessage& message,
                             RunObserver* observer, StageTimings& timings,
                             RequestOutcome& outcome) {
  c10::OptionalDeviceGuard on_device;
  if (options_.device.is_cuda()) {
    // Nothing above the host's run thread catches; a GPU in a sticky error
    // state can fail even this.
    RETURN_IF_ERROR(base::Guarded("selecting the rank's GPU", [&] {
      on_device.reset_device(options_.device);
    }));
  }
  const auto started = std::chrono::steady_clock::now();
  const v1::InputConfig& config = message.run.config();
  outcome.config = config;
  outcome.payload_digest = config::StableDigest(message.payload);
  outcome.digest = message.digest;
  bool collective_failed = false;
  if (!message.agreement.ok()) {
    // Every rank saw the same mismatch; no tensor collective has run.
    outcome.status = message.agreement;
    spdlog::error("rank {}: request {} refused: {}", channel_.rank(),
                  config.request_id(),
                  std::string(message.agreement.message()));
  } else {
    absl::Status local = engine_.Prepare(config, timings);
    ASSIGN_OR_RETURN(std::vector<RankReport> prepared,
                     GatherReports(absl::StrCat("prepare reports of request ",
                                                config.request_id()),
                                   {local, {}, {}}));
    // Run only when every rank holds buffers for this config, so no rank
    // enters a tensor collective that a peer will never join.
    const absl::Status all_prepared = CombineRankStatuses(prepared);
    if (all_prepared.ok()) {
      absl::StatusOr<at::Tensor> output =
          engine_.Run(config, observer, timings);
      local = output.status();
      if (output.ok()) outcome.output = *std::move(output);
    }
    // Rank 0's total is the whole request (freeze, queue and respond
    // included), measured once by the thread that drives it.
    if (channel_.rank() != 0) timings.Add(Stage::kTotal, SecondsSince(started));
    ASSIGN_OR_RETURN(
        std::vector<RankReport> reports,
        GatherReports(
            absl::StrCat("rank reports of request ", config.request_id()),
            {local, timings, ReadRankMemory(options_.device)}));
    for (const RankReport& report : reports) {
      outcome.rank_timings.push_back(report.timings);
      outcome.rank_memory.push_back(report.memory);
    }
    outcome.status =
        all_prepared.ok() ? CombineRankStatuses(reports) : all_prepared;
    if (!outcome.status.ok()) outcome.output = at::Tensor();
    collective_failed =
        std::any_of(reports.begin(), reports.end(), [](const RankReport& r) {
          return dist::IsCollectiveFailure(r.status);
        });
  }
  if (options_.on_outcome) options_.on_outcome(outcome);
  if (collective_failed) {
    // Every rank read the same reports, so every rank leaves the group here.
    return absl::UnavailableError(absl::StrCat(
        "request ", config.request_id(),
        " failed in a collective, which can leave its process group "
        "unusable, so the rank group is re-formed: ",
        outcome.status.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<RankReport>> RankLoop::GatherReports(
    absl::string_view operation, const RankReport& mine) {
  ASSIGN_OR_RETURN(
      std::vector<std::string> texts,
      channel_.AllGatherBytes(operation, SerializeRankReport(mine)));
  std::vector<RankReport> reports;
  for (const std::string& text : texts) {
    ASSIGN_OR_RETURN(RankReport report, ParseRankReport(text));
    reports.push_back(std::move(report));
  }
  return reports;
}

}  // namespace ditserve::engine
