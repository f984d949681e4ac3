#include "core/dist/rendezvous.h"

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef DITSERVE_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "core/dist/startup_agreement.h"
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

c10::intrusive_ptr<c10d::Store> ConnectStore(
    const RankEnv& env, bool is_server, std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<std::uint16_t>(env.master_port);
  store_options.isServer = is_server;
  store_options.waitWorkers = false;
  store_options.timeout = timeout;
  return c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Rendezvous>> Rendezvous::Connect(
    const RankEnv& env, const RendezvousOptions& options,
    const v1::StartupFacts& facts) {
  std::unique_ptr<Rendezvous> rendezvous(new Rendezvous(env, options));
  const std::string where = absl::StrCat(env.master_addr, ":", env.master_port);
  RETURN_IF_ERROR(base::GuardedAs(
      absl::StatusCode::kUnavailable,
      absl::StrCat("rank ", env.rank, " could not ",
                   env.rank == 0 ? "serve" : "reach",
                   " the store at MASTER_ADDR:PORT ", where, " within ",
                   options.connect_timeout.count(), " ms"),
      [&] {
        rendezvous->store_ = ConnectStore(env, /*is_server=*/env.rank == 0,
                                          options.connect_timeout);
      }));
  RETURN_IF_ERROR(AgreeOnStartup(*rendezvous->store_, env.rank, env.world_size,
                                 facts, options.connect_timeout));
  ASSIGN_OR_RETURN(rendezvous->world_,
                   rendezvous->NewGlooGroup("world", env.rank, env.world_size));
  ASSIGN_OR_RETURN(
      ProcessGroupPtr control,
      rendezvous->NewGlooGroup("control", env.rank, env.world_size));
  rendezvous->control_ = control;
  rendezvous->data_ = rendezvous->world_;
#ifdef DITSERVE_WITH_NCCL
  RETURN_IF_ERROR(base::GuardedAs(
      absl::StatusCode::kUnavailable,
      absl::StrCat("rank ", env.rank, " could not form the NCCL data group"),
      [&] {
        auto nccl_options = c10d::ProcessGroupNCCL::Options::create();
        nccl_options->timeout = options.collective_timeout;
        rendezvous->data_ = c10::make_intrusive<c10d::ProcessGroupNCCL>(
            c10::make_intrusive<c10d::PrefixStore>("data", rendezvous->store_),
            env.rank, env.world_size, nccl_options);
      }));
#endif
  // A connection of its own, so heartbeats never queue behind a collective's
  // store traffic.
  RETURN_IF_ERROR(base::GuardedAs(
      absl::StatusCode::kUnavailable,
      absl::StrCat("rank ", env.rank,
                   " could not open the watchdog's store connection to ",
                   where),
      [&] {
        rendezvous->watchdog_ = std::make_unique<Watchdog>(
            ConnectStore(env, /*is_server=*/false, options.connect_timeout),
            env.rank, env.world_size, options.watchdog);
      }));
  spdlog::info("rank {}: joined a group of {} ranks via {}", env.rank,
               env.world_size, where);
  return rendezvous;
}

void Rendezvous::KeepStoreForSurvivors() {
  if (env_.rank != 0) return;
  const auto linger = options_.collective_timeout + watchdog_->window();
  spdlog::info("rank 0: keeping the store up {} ms for the other ranks",
               linger.count());
  std::this_thread::sleep_for(linger);
}

absl::StatusOr<ProcessGroupPtr> Rendezvous::NewGlooGroup(
    absl::string_view prefix, int rank_in_group, int size) {
  return base::GuardedAs(
      absl::StatusCode::kUnavailable,
      absl::StrCat("rank ", env_.rank, " could not form the Gloo group \"",
                   prefix, "\" (rank ", rank_in_group, " of ", size,
                   ") within ", options_.connect_timeout.count(), " ms"),
      [&] {
        auto gloo_options = c10d::ProcessGroupGloo::Options::create(
            options_.collective_timeout);
        gloo_options->devices.push_back(CreateGlooDevice(env_.master_addr));
        // Control messages and the gathers here are small; one thread per
        // group keeps a rank's thread count low.
        gloo_options->threads = 1;
        return ProcessGroupPtr(c10::make_intrusive<c10d::ProcessGroupGloo>(
            c10::make_intrusive<c10d::PrefixStore>(std::string(prefix), store_),
            rank_in_group, size, gloo_options));
      });
}

}  // namespace ditserve::dist
