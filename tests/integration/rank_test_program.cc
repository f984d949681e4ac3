// One rank of the distributed tests: joins the group from the torchrun
// variables the launcher sets, runs the real rank loop with
// ShardGatherProgram, and prints one line per event for the test to check:
//   OUTCOME rank=R request=ID code=CODE payload_digest=0x.. digest=0x..
//       allocations=N message=...
//   BUFFER rank=R request=ID name=NAME shape=AxBxC
//   TIMINGS rank=0 request=ID ranks=N
//   LOOP_END rank=R code=CODE message=...
// Exit status: 0 after a clean shutdown, 2 when start-up failed, 3 when the
// loop ended with an error.

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/base/status_macros.h"
#include "core/config/config_digest.h"
#include "core/dist/control_channel.h"
#include "core/dist/mesh.h"
#include "core/dist/mesh_groups.h"
#include "core/dist/rank_env.h"
#include "core/dist/rendezvous.h"
#include "core/dist/run_failure_board.h"
#include "core/dist/sigpipe.h"
#include "core/engine/engine.h"
#include "core/engine/rank_loop.h"
#include "tests/integration/injected_failure.h"
#include "tests/integration/scenarios.h"
#include "tests/integration/shard_gather_program.h"
#include "tests/support/frozen_test_config.h"

ABSL_FLAG(std::string, scenario, "consensus",
          "consensus, fault, seed, cancel, kill, stall, dp_failure or idle "
          "(see scenarios.h)");
ABSL_FLAG(int, timeout_ms, 4000, "timeout of every collective");
ABSL_FLAG(int, ping_interval_ms, 200, "rank 0 pings after this idle time");
ABSL_FLAG(int, watchdog_interval_ms, 300, "heartbeat interval");
ABSL_FLAG(int, fault_rank, -1,
          "this rank alters the first RunConfig it parses (height + 16)");
ABSL_FLAG(int, stall_rank, -1,
          "this rank sleeps --stall_ms before its first all-gather");
ABSL_FLAG(int, stall_ms, 0, "see --stall_rank");
ABSL_FLAG(int, fail_dp_group, -1,
          "every rank of this dp group fails its first config on its own "
          "during --fail_step");
ABSL_FLAG(int, fail_rank, -1,
          "this rank alone fails its first config during --fail_step");
ABSL_FLAG(int, fail_step, 1, "see --fail_dp_group (0-based)");
ABSL_FLAG(bool, fail_after_boundary, false,
          "--fail_dp_group or --fail_rank fails after the step's boundary, "
          "before its preview gather");
ABSL_FLAG(ditserve::testing::InjectedFailure, fail_as,
          ditserve::testing::InjectedFailure::kReturned,
          "how --fail_dp_group or --fail_rank fails: returned (a Status), "
          "thrown (LibTorch's c10::Error) or out_of_memory (its "
          "c10::OutOfMemoryError)");
ABSL_FLAG(int, idle_ms, 500,
          "rank 0 idles this long after the last config before shutdown");

namespace ditserve::testing {
namespace {

constexpr int kStartupFailed = 2;
constexpr int kLoopFailed = 3;
// Longest wait for one submitted config to complete.

void PrintLine(const std::string& line) {
  // One write per line, flushed at once: the test reads the output while
  // the rank runs, and a killed rank must not lose lines.
  std::cout << line << std::endl;
}

std::string OneLine(absl::string_view text) {
  std::string line(text);
  for (char& c : line) {
    if (c == '\n') c = ' ';
  }
  return line;
}

void PrintOutcome(int rank, const engine::Engine& engine,
                  const engine::RequestOutcome& outcome) {
  const std::string& request = outcome.config.request_id();
  PrintLine(absl::StrCat(
      "OUTCOME rank=", rank, " request=", request,
      " code=", absl::StatusCodeToString(outcome.status.code()),
      " payload_digest=", config::DigestHex(outcome.payload_digest), " digest=",
      config::DigestHex(outcome.digest), " allocations=", engine.allocations(),
      " message=", OneLine(outcome.status.message())));
  if (engine.plan() != nullptr) {
    for (const engine::BufferSpec& buffer : engine.plan()->buffers) {
      PrintLine(absl::StrCat("BUFFER rank=", rank, " request=", request,
                             " name=", buffer.name,
                             " shape=", absl::StrJoin(buffer.shape, "x")));
    }
  }
  if (rank == 0) {
    PrintLine(absl::StrCat("TIMINGS rank=0 request=", request,
                           " ranks=", outcome.rank_timings.size()));
  }
}

// Rank 0's stand-in for a client that cancels after a given step.
class CancelAfterStep : public engine::RunObserver {
 public:
  explicit CancelAfterStep(int step) : step_(step) {}
  v1::StepDecision DecideAfterStep(int step, int steps) override {
    return step >= step_ ? v1::STEP_DECISION_CANCEL
                         : v1::STEP_DECISION_CONTINUE;
  }

 private:
  int step_;
};

// Rank 0: runs the scenario's configs one after another, idles (pinging),
// then shuts the group down. An error means the group broke.
absl::Status RunScenario(engine::RankLoop& loop,
                         const v1::ParallelConfig& parallel) {
  for (const ScenarioStep& step :
       ScenarioSteps(absl::GetFlag(FLAGS_scenario))) {
    absl::StatusOr<v1::InputConfig> config =
        FreezeTestConfig(step.request, parallel);
    if (!config.ok()) {
      PrintLine(
          absl::StrCat("FREEZE_FAILED ", OneLine(config.status().ToString())));
      break;
    }
    CancelAfterStep canceller(step.cancel_after_step);
    RETURN_IF_ERROR(loop.RunOnAllRanks(*config, step.cancel_after_step >= 0
                                                    ? &canceller
                                                    : nullptr)
                        .status());
  }
  const absl::Duration ping_interval =
      absl::Milliseconds(absl::GetFlag(FLAGS_ping_interval_ms));
  const absl::Time idle_end =
      absl::Now() + absl::Milliseconds(absl::GetFlag(FLAGS_idle_ms));
  while (absl::Now() < idle_end) {
    absl::SleepFor(std::min(ping_interval, idle_end - absl::Now()));
    RETURN_IF_ERROR(loop.Ping());
  }
  return loop.Shutdown("scenario finished");
}

int Main() {
  dist::IgnoreSigpipe();
  const std::chrono::milliseconds timeout(absl::GetFlag(FLAGS_timeout_ms));
  absl::StatusOr<dist::RankEnv> env = dist::ResolveRankEnvFromProcess({});
  if (!env.ok()) {
    PrintLine(
        absl::StrCat("STARTUP_FAILED ", OneLine(env.status().ToString())));
    return kStartupFailed;
  }
  const int rank = env->rank;
  dist::RendezvousOptions options;
  options.connect_timeout = std::chrono::milliseconds(20000);
  options.collective_timeout = timeout;
  options.watchdog.interval =
      std::chrono::milliseconds(absl::GetFlag(FLAGS_watchdog_interval_ms));
  absl::StatusOr<std::unique_ptr<dist::Rendezvous>> rendezvous =
      dist::Rendezvous::Connect(*env, options, {});
  absl::StatusOr<v1::ParallelConfig> parallel =
      TestParallelConfig(env->world_size);
  if (!rendezvous.ok() || !parallel.ok()) {
    PrintLine(absl::StrCat(
        "STARTUP_FAILED ",
        OneLine((rendezvous.ok() ? parallel.status() : rendezvous.status())
                    .ToString())));
    return kStartupFailed;
  }
  absl::StatusOr<dist::Mesh> mesh = dist::Mesh::Create(*parallel);
  if (!mesh.ok()) {
    PrintLine(
        absl::StrCat("STARTUP_FAILED ", OneLine(mesh.status().ToString())));
    return kStartupFailed;
  }
  absl::StatusOr<dist::MeshGroups> groups =
      dist::MeshGroups::Create(*mesh, **rendezvous);
  if (!groups.ok()) {
    PrintLine(
        absl::StrCat("STARTUP_FAILED ", OneLine(groups.status().ToString())));
    return kStartupFailed;
  }

  dist::Watchdog* watchdog = &(*rendezvous)->watchdog();
  dist::ControlChannelOptions channel_options;
  channel_options.timeout = timeout;
  if (rank == absl::GetFlag(FLAGS_fault_rank)) {
    channel_options.alter_parsed_run_config =
        [altered = false](v1::RunConfig& run) mutable {
          if (altered) return;
          altered = true;
          run.mutable_config()->set_height(run.config().height() + 16);
        };
  }
  dist::ControlChannel channel((*rendezvous)->control(), rank, env->world_size,
                               watchdog, std::move(channel_options));
  ShardGatherProgram pipeline(
      rank == absl::GetFlag(FLAGS_stall_rank)
          ? absl::Milliseconds(absl::GetFlag(FLAGS_stall_ms))
          : absl::ZeroDuration(),
      mesh->CoordinatesOf(rank).dp == absl::GetFlag(FLAGS_fail_dp_group) ||
              rank == absl::GetFlag(FLAGS_fail_rank)
          ? absl::GetFlag(FLAGS_fail_step)
          : -1,
      absl::GetFlag(FLAGS_fail_after_boundary), absl::GetFlag(FLAGS_fail_as));
  dist::RunFailureBoard run_failures((*rendezvous)->store(), env->world_size);
  engine::Engine engine(rank, *mesh, *groups, channel, watchdog, pipeline,
                        {.dimensions = kRankTestDimensions,
                         .tensor_options = at::TensorOptions(at::kFloat),
                         .collective_timeout = timeout,
                         .run_failures = &run_failures});
  engine::RankLoop loop(
      channel, engine,
      {.on_outcome = [rank, &engine](const engine::RequestOutcome& outcome) {
        PrintOutcome(rank, engine, outcome);
      }});
  PrintLine(absl::StrCat("READY rank=", rank));

  const absl::Status status =
      rank == 0 ? RunScenario(loop, *parallel) : loop.Follow();
  PrintLine(absl::StrCat("LOOP_END rank=", rank,
                         " code=", absl::StatusCodeToString(status.code()),
                         " message=", OneLine(status.message())));
  if (!status.ok()) {
    (*rendezvous)->KeepStoreForSurvivors();
    return kLoopFailed;
  }
  return 0;
}

}  // namespace
}  // namespace ditserve::testing

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return ditserve::testing::Main();
}
