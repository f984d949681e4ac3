#include "server/serving_generation.h"

#include <utility>
#include <vector>

#include "core/base/status_macros.h"
#include "server/image_output.h"
#include "spdlog/spdlog.h"

namespace ditserve::server {

absl::StatusOr<std::unique_ptr<ServingGeneration>> ServingGeneration::Form(
    const engine::RankSetup& setup, std::shared_ptr<dist::GroupStore> store,
    int64_t generation, const Shared& shared,
    std::function<absl::Status()> keep_waiting) {
  std::unique_ptr<ServingGeneration> formed(new ServingGeneration());
  ASSIGN_OR_RETURN(formed->runtime_,
                   engine::JoinGroup(setup, store, generation, keep_waiting));
  // Every rank joined; loading the model may still take minutes.
  shared.metrics->SetRanksAlive(formed->runtime_->env().world_size);
  const absl::Status loaded = [&]() -> absl::Status {
    // A rank that starts from now on waits for the next generation instead
    // of joining this one, which is whole.
    RETURN_IF_ERROR(store->MarkFormed(generation));
    // Every rank left the earlier generations to join this one. Their keys
    // would otherwise stay in rank 0's store for as long as it serves; a
    // failure leaves them for the next formation to delete.
    if (absl::Status forgot = store->ForgetGenerationsBefore(generation);
        !forgot.ok()) {
      spdlog::warn("{}", forgot.ToString());
    }
    ASSIGN_OR_RETURN(
        formed->model_,
        engine::LoadModel(setup, *formed->runtime_, std::move(keep_waiting)));
    return absl::OkStatus();
  }();
  if (!loaded.ok()) {
    // Some rank failed after joining; which one, the host cannot tell:
    // only itself is known alive.
    shared.metrics->SetRanksAlive(1);
    return loaded;
  }
  engine::RankLoop& loop = formed->runtime_->StartLoop(
      *formed->model_.program, formed->model_.dimensions,
      formed->model_.placement, {});
  formed->scheduler_ = std::make_unique<Scheduler>(
      shared.queue, &loop, MakeImageOutput(*formed->model_.program),
      shared.metrics, setup.spec, shared.scheduler);
  formed->scheduler_->Start();
  return formed;
}

ServingGeneration::~ServingGeneration() = default;

int ServingGeneration::Abandon() {
  const std::vector<int> lost = runtime_->FindLostRanks();
  runtime_->Abandon();
  return runtime_->env().world_size - static_cast<int>(lost.size());
}

}  // namespace ditserve::server
