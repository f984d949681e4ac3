#include "core/dist/rendezvous.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <utility>
#include <vector>
#ifdef DITSERVE_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "core/dist/startup_agreement.h"
#include "core/dist/store_wait.h"
#include "spdlog/spdlog.h"

namespace ditserve::dist {
namespace {

bool IsLoopback(const std::string& address) {
  return address == "localhost" || absl::StartsWith(address, "127.") ||
         address == "::1";
}

// Gloo binds each rank to one interface: GLOO_SOCKET_IFNAME as in PyTorch,
// loopback when rank 0 is on loopback (one machine), else the address the
// hostname resolves to.
std::shared_ptr<::gloo::transport::Device> CreateGlooDevice(
    const std::string& master_addr) {
  const char* interface = std::getenv("GLOO_SOCKET_IFNAME");
  if (interface != nullptr && interface[0] != '\0') {
    return c10d::ProcessGroupGloo::createDeviceForInterface(interface);
  }
  if (IsLoopback(master_addr)) {
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  }
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Rendezvous>> Rendezvous::Join(
    std::shared_ptr<GroupStore> store, int64_t generation,
    const RendezvousOptions& options, const v1::StartupFacts& facts,
    std::function<absl::Status()> keep_waiting) {
  const RankEnv& env = store->env();
  std::unique_ptr<Rendezvous> rendezvous(
      new Rendezvous(store, generation, options));
  const StoreWait wait{
      .timeout = options.connect_timeout,
      .keep_waiting = [&]() -> absl::Status {
        if (keep_waiting) RETURN_IF_ERROR(keep_waiting());
        if (env.rank == 0) return absl::OkStatus();
        ASSIGN_OR_RETURN(const int64_t current, store->Current());
        if (current == generation) return absl::OkStatus();
        return absl::UnavailableError(absl::StrCat(
            "rank 0 opened group generation ", current, " while rank ",
            env.rank, " waited to join ", generation));
      }};
  RETURN_IF_ERROR(AgreeOnStartup(*rendezvous->scoped_, env.rank, env.world_size,
                                 facts, wait));
  ASSIGN_OR_RETURN(rendezvous->world_,
                   rendezvous->NewGlooGroup("world", env.rank, env.world_size));
  ASSIGN_OR_RETURN(
      rendezvous->control_,
      rendezvous->NewGlooGroup("control", env.rank, env.world_size));
  ASSIGN_OR_RETURN(c10::intrusive_ptr<c10d::Store> watchdog_connection,
                   store->NewConnection());
  rendezvous->watchdog_ =
      std::make_unique<Watchdog>(std::move(watchdog_connection), env.rank,
                                 env.world_size, options.watchdog, generation);
  spdlog::info("rank {}: joined generation {} of a group of {} ranks via {}",
               env.rank, generation, env.world_size, store->address());
  return rendezvous;
}

absl::StatusOr<std::unique_ptr<Rendezvous>> Rendezvous::Connect(
    const RankEnv& env, const RendezvousOptions& options,
    const v1::StartupFacts& facts) {
  ASSIGN_OR_RETURN(std::shared_ptr<GroupStore> store,
                   GroupStore::Connect(env, options.connect_timeout));
  return Join(std::move(store), /*generation=*/0, options, facts, nullptr);
}

void Rendezvous::Abandon() {
  std::vector<ProcessGroupPtr> gloo;
  for (ProcessGroupPtr& group : groups_) {
    if (dynamic_cast<c10d::ProcessGroupGloo*>(group.get()) != nullptr) {
      gloo.push_back(std::move(group));
    } else {
      // The reference is released without being dropped.
      group.release();
    }
  }
  groups_.clear();
  // By then every collective of these groups has ended: completed, or
  // failed at Gloo's timeout. The margin covers a collective started just
  // before the group broke.
  const auto linger = 2 * options_.collective_timeout;
  std::thread([gloo = std::move(gloo), linger]() mutable {
    std::this_thread::sleep_for(linger);
    gloo.clear();
  }).detach();
}

void Rendezvous::KeepStoreForSurvivors() {
  if (env().rank != 0) return;
  const auto linger = options_.collective_timeout + watchdog_->window();
  spdlog::info("rank 0: keeping the store up {} ms for the other ranks",
               linger.count());
  std::this_thread::sleep_for(linger);
}

absl::StatusOr<ProcessGroupPtr> Rendezvous::FormGroup(
    absl::string_view backend, absl::string_view prefix, int rank_in_group,
    int size,
    const std::function<ProcessGroupPtr(c10::intrusive_ptr<c10d::Store>)>&
        create) {
  ASSIGN_OR_RETURN(
      ProcessGroupPtr group,
      base::GuardedAs(absl::StatusCode::kUnavailable,
                      absl::StrCat("rank ", env().rank, " could not form the ",
                                   backend, " group \"", prefix, "\" (rank ",
                                   rank_in_group, " of ", size, ") within ",
                                   options_.connect_timeout.count(), " ms"),
                      [&] {
                        return create(c10::make_intrusive<c10d::PrefixStore>(
                            std::string(prefix), scoped_));
                      }));
  groups_.push_back(group);
  return group;
}

absl::StatusOr<ProcessGroupPtr> Rendezvous::NewGlooGroup(
    absl::string_view prefix, int rank_in_group, int size) {
  return FormGroup(
      "Gloo", prefix, rank_in_group, size,
      [&](c10::intrusive_ptr<c10d::Store> store) {
        auto gloo_options = c10d::ProcessGroupGloo::Options::create(
            options_.collective_timeout);
        gloo_options->devices.push_back(CreateGlooDevice(env().master_addr));
        // Control messages and the gathers here are small; one thread per
        // group keeps a rank's thread count low.
        gloo_options->threads = 1;
        return ProcessGroupPtr(c10::make_intrusive<c10d::ProcessGroupGloo>(
            std::move(store), rank_in_group, size, gloo_options));
      });
}

absl::StatusOr<ProcessGroupPtr> Rendezvous::NewDataGroup(
    absl::string_view prefix, int rank_in_group, int size) {
  if (!options_.nccl_data_group) {
    return NewGlooGroup(prefix, rank_in_group, size);
  }
#ifdef DITSERVE_WITH_NCCL
  return FormGroup(
      "NCCL", prefix, rank_in_group, size,
      [&](c10::intrusive_ptr<c10d::Store> store) {
        auto nccl_options = c10d::ProcessGroupNCCL::Options::create();
        nccl_options->timeout = options_.collective_timeout;
        return ProcessGroupPtr(c10::make_intrusive<c10d::ProcessGroupNCCL>(
            std::move(store), rank_in_group, size, nccl_options));
      });
#else
  return absl::FailedPreconditionError(absl::StrCat(
      "the NCCL group \"", prefix,
      "\" was asked for, but this build has no NCCL (configure with "
      "-DDITSERVE_CUDA=ON)"));
#endif
}

}  // namespace ditserve::dist
