// ditserve-worker: ranks 1..N-1. Joins the group, loads its share of the
// model and follows rank 0's control messages until shut down. When another
// rank is lost it joins the group rank 0 re-forms; it exits non-zero when
// the host is lost.

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "core/base/allocator_tuning.h"
#include "core/base/crash_report.h"
#include "core/base/end_by_signal.h"
#include "core/base/logging.h"
#include "core/base/openmp_wait_policy.h"
#include "core/dist/group_store.h"
#include "core/dist/sigpipe.h"
#include "core/engine/compute_threads.h"
#include "core/engine/model_loading.h"
#include "core/engine/rank_flags.h"
#include "core/engine/rank_runtime.h"
#include "core/engine/rank_setup.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(double, stop_grace_s, 140,
          "after SIGTERM or SIGINT, seconds a worker serving a group keeps "
          "following the host, whose drain (--drain_timeout_s) finishes the "
          "admitted requests and then shuts the group down; past them, or "
          "when the group ends or was not joined, it exits by the signal. "
          "Keep it above the host's --drain_timeout_s and below the "
          "supervisor's kill timeout; a second signal exits at once");

namespace ditserve::worker {
namespace {

// A day: longer than any supervisor waits, and short enough to convert.
constexpr double kMostStopGraceSeconds = 86400;

// Supervisors signal every rank of a group at once (a Kubernetes
// LeaderWorkerSet's pods, systemd stopping a machine): a worker that died at
// once would fail the requests the host is draining.
std::atomic<int> stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free,
              "read in a signal handler");
// Whether the worker follows the host in a formed group. Cleared when a
// generation breaks, not when the host shuts it down: the process then
// ends by returning.
std::atomic<bool> following_host{false};

void NoteStopSignal(int signal) {
  if (stop_signal.exchange(signal) != 0) base::EndBySignal(signal);
}

// Once a stop signal came, waits up to `grace_seconds` for the host to shut
// the group down (the process then ends normally) and otherwise ends the
// process by that signal.
void EndByStopSignalAfter(double grace_seconds) {
  std::signal(SIGTERM, NoteStopSignal);
  std::signal(SIGINT, NoteStopSignal);
  std::thread([grace_seconds] {
    while (stop_signal == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    const int signal = stop_signal;
    const auto give_up = std::chrono::steady_clock::now() +
                         std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::duration<double>(grace_seconds));
    if (following_host) {
      spdlog::info(
          "{}: following the host until it shuts the group down, at most {} "
          "s (--stop_grace_s)",
          strsignal(signal), grace_seconds);
    }
    while (following_host && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    spdlog::warn("{}: exiting{}", strsignal(signal),
                 following_host ? " (--stop_grace_s passed)" : "");
    base::EndBySignal(signal);
  }).detach();
}

int Fail(const absl::Status& status, const char* what) {
  spdlog::error("{}: {}", what, status.ToString());
  return 1;
}

// How one generation of the group ended for this worker.
struct GenerationEnd {
  // OK: the host shut the group down.
  absl::Status status;
  // Whether to join the next generation: the group broke or never formed,
  // rather than this rank being started wrongly or unable to load.
  bool rejoin = false;
};

GenerationEnd ServeGeneration(const engine::RankSetup& setup,
                              std::shared_ptr<dist::GroupStore> store,
                              int64_t generation) {
  absl::StatusOr<std::unique_ptr<engine::RankRuntime>> runtime =
      engine::JoinGroup(setup, std::move(store), generation);
  if (!runtime.ok()) {
    // Only a group that did not form, or was left for a newer generation,
    // is worth another try: differing flags, model or build, or an
    // unreadable checkpoint, would fail again.
    return {.status = runtime.status(),
            .rejoin = absl::IsUnavailable(runtime.status())};
  }
  absl::StatusOr<engine::LoadedModel> model =
      engine::LoadModel(setup, **runtime);
  if (!model.ok()) {
    // UNAVAILABLE: another rank failed, died or is too slow to load; this
    // rank's own checkpoint errors would fail again.
    return {.status = model.status(),
            .rejoin = absl::IsUnavailable(model.status())};
  }
  // Before the line that says so: a signal after it finds the worker
  // following.
  following_host = true;
  spdlog::info("joined generation {} of a group of {} ranks; serving {}",
               generation, (*runtime)->env().world_size, setup.model_dir);
  const absl::Status status =
      (*runtime)
          ->StartLoop(*model->program, model->dimensions, model->placement, {})
          .Follow();
  if (status.ok()) return {};
  following_host = false;
  (*runtime)->Abandon();
  return {.status = status, .rejoin = true};
}

int RunWorker() {
  absl::StatusOr<dist::RankEnv> env =
      dist::ResolveRankEnvFromProcess(engine::RankEnvOverridesFromFlags());
  if (!env.ok()) return Fail(env.status(), "rank environment");
  if (absl::Status s =
          base::ConfigureLogging(env->rank, absl::GetFlag(FLAGS_log_format));
      !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 2;
  }
  if (env->rank == 0) {
    return Fail(absl::InvalidArgumentError(
                    "ditserve-worker runs ranks > 0 but RANK is 0; start "
                    "ditserve-host for rank 0"),
                "rank environment");
  }
  spdlog::info("{}", base::KeepFreedMemoryForReuse());
  spdlog::info("{}", base::OpenMpWaitPolicy());
  engine::SetComputeThreads(engine::IntraOpThreads(*env));
  dist::IgnoreSigpipe();
  absl::StatusOr<engine::RankSetup> setup = engine::RankSetupFromFlags(*env);
  if (!setup.ok()) return Fail(setup.status(), "start-up");
  const std::chrono::milliseconds timeout = setup->rendezvous.connect_timeout;
  absl::StatusOr<std::shared_ptr<dist::GroupStore>> store =
      dist::GroupStore::Connect(*env, timeout);
  if (!store.ok()) return Fail(store.status(), "rendezvous");
  // After a loss the host opens a new generation of the group; a survivor
  // and a restarted rank both join it. The store going away means the host
  // is gone, and the supervisor restarts this rank with it.
  int64_t generation = -1;
  while (true) {
    absl::StatusOr<int64_t> next =
        (*store)->GenerationToJoin(generation, timeout);
    if (!next.ok()) return Fail(next.status(), "rank group");
    generation = *next;
    const GenerationEnd end = ServeGeneration(*setup, *store, generation);
    if (end.status.ok()) break;
    if (!end.rejoin) return Fail(end.status, "rank group");
    spdlog::warn("rank group generation {} ended: {}; joining the next one",
                 generation, end.status.ToString());
  }
  spdlog::info("shut down by the host");
  return 0;
}

}  // namespace
}  // namespace ditserve::worker

int main(int argc, char** argv) {
  ditserve::base::InstallCrashReport(argv[0]);
  absl::SetProgramUsageMessage(
      "ditserve-worker: rank > 0 of a ditserve group (set RANK, WORLD_SIZE, "
      "MASTER_ADDR, MASTER_PORT as torchrun does)");
  absl::ParseCommandLine(argc, argv);
  const double grace = absl::GetFlag(FLAGS_stop_grace_s);
  // Checked before any rank waits on this one.
  if (!(grace >= 0 && grace <= ditserve::worker::kMostStopGraceSeconds)) {
    std::fprintf(stderr, "--stop_grace_s %g: allowed 0 to %g seconds\n", grace,
                 ditserve::worker::kMostStopGraceSeconds);
    return 2;
  }
  ditserve::worker::EndByStopSignalAfter(grace);
  return ditserve::worker::RunWorker();
}
