// ditserve-worker: ranks 1..N-1. Joins the group, loads its share of the
// model and follows rank 0's control messages until shut down; exits
// non-zero when the host or another rank is lost.

#include <cstdio>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "core/base/logging.h"
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
  engine::SetComputeThreads(engine::IntraOpThreads(*env));
  absl::StatusOr<engine::RankSetup> setup = engine::RankSetupFromFlags(*env);
  if (!setup.ok()) return Fail(setup.status(), "start-up");
  absl::StatusOr<std::unique_ptr<engine::RankRuntime>> runtime =
      engine::JoinGroup(*env, *setup);
  if (!runtime.ok()) return Fail(runtime.status(), "rendezvous");
  absl::StatusOr<engine::LoadedModel> model =
      engine::LoadModel(setup->model_dir, setup->spec, **runtime);
  if (!model.ok()) return Fail(model.status(), "model");
  spdlog::info("joined a group of {} ranks; serving {}", env->world_size,
               setup->model_dir);
  const absl::Status status =
      (*runtime)->StartLoop(*model->program, model->dimensions, {}).Follow();
  if (!status.ok()) return Fail(status, "rank group");
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
