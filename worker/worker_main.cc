// ditserve-worker: ranks 1..N-1. Joins the group, loads its share of the
// model and follows rank 0's control messages until shut down. When another
// rank is lost it joins the group rank 0 re-forms; it exits non-zero when
// the host is lost.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "core/base/allocator_tuning.h"
#include "core/base/logging.h"
#include "core/base/openmp_wait_policy.h"
#include "core/dist/group_store.h"
#include "core/engine/compute_threads.h"
#include "core/engine/model_loading.h"
#include "core/engine/rank_flags.h"
#include "core/engine/rank_runtime.h"
#include "core/engine/rank_setup.h"
#include "spdlog/spdlog.h"

namespace ditserve::worker {
namespace {

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
  if (!model.ok()) return {.status = model.status()};
  spdlog::info("joined generation {} of a group of {} ranks; serving {}",
               generation, (*runtime)->env().world_size, setup.model_dir);
  const absl::Status status =
      (*runtime)
          ->StartLoop(*model->program, model->dimensions, model->placement, {})
          .Follow();
  if (status.ok()) return {};
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
  absl::SetProgramUsageMessage(
      "ditserve-worker: rank > 0 of a ditserve group (set RANK, WORLD_SIZE, "
      "MASTER_ADDR, MASTER_PORT as torchrun does)");
  absl::ParseCommandLine(argc, argv);
  return ditserve::worker::RunWorker();
}
