// ditserve-host: rank 0. Serves ditserve.v1.Generation, grpc.health.v1 and
// server reflection over gRPC, Prometheus metrics over HTTP, and runs its
// own share of every request in the rank loop.
#include <ATen/Parallel.h>
#include <torch/version.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "core/base/allocator_tuning.h"
#include "core/base/crash_report.h"
#include "core/base/end_by_signal.h"
#include "core/base/logging.h"
#include "core/base/monotonic_clock.h"
#include "core/base/openmp_wait_policy.h"
#include "core/config/model_defaults.h"
#include "core/dist/group_store.h"
#include "core/dist/sigpipe.h"
#include "core/engine/build_version.h"
#include "core/engine/compute_threads.h"
#include "core/engine/model_loading.h"
#include "core/engine/rank_flags.h"
#include "core/engine/rank_setup.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "server/admission_queue.h"
#include "server/bearer_auth.h"
#include "server/credential_reloader.h"
#include "server/generation_service.h"
#include "server/health_service.h"
#include "server/host_credentials.h"
#include "server/host_flags.h"
#include "server/http_api.h"
#include "server/http_cors.h"
#include "server/http_server.h"
#include "server/image_output.h"
#include "server/metrics.h"
#include "server/request_intake.h"
#include "server/scheduler.h"
#include "server/serving_generation.h"
#include "spdlog/spdlog.h"

namespace ditserve::server {
namespace {

// The most often a client may send keepalive pings while the host sends it
// nothing, as through a Generate call's run. Clients are told 10 s (README,
// "Clients that vanish"); half that here, so that a ping timer firing a little
// early is never held against a client, which three times would close its
// connection.
constexpr absl::Duration kShortestClientPingInterval = absl::Seconds(5);

// Set by SIGTERM/SIGINT; a plain flag read by the main thread, since a signal
// handler may do nothing else safely.
volatile std::sig_atomic_t stop_requested = 0;
void RequestStop(int /*signal*/) { stop_requested = 1; }

// Until the group forms nothing was admitted: a stop signal ends the host at
// once, saying so first (a handler may only write(), not log).
void EndBeforeServing(int signal) {
  static constexpr char kWhy[] =
      "ditserve-host: stop signal before the rank group formed; exiting\n";
  [[maybe_unused]] const ssize_t written =
      write(STDERR_FILENO, kWhy, sizeof(kWhy) - 1);
  base::EndBySignal(signal);
}

volatile std::sig_atomic_t reload_requested = 0;
void RequestReload(int /*signal*/) { reload_requested = 1; }

int Fail(const absl::Status& status, const char* what) {
  spdlog::error("{}: {}", what, status.ToString());
  return 1;
}

// Answers the jobs that waited for a re-formation (kept when every rank was
// alive) once an attempt failed, so that none waits for more than one
// attempt.
void AnswerQueuedAfterFailedAttempt(AdmissionQueue& queue,
                                    const absl::Status& attempt) {
  const int answered = queue.FinishQueued(
      stop_requested
          ? ShutDownBeforeRunning()
          : absl::UnavailableError(absl::StrCat(
                "the rank group did not re-form: ", attempt.message(),
                "; retry in a few seconds")));
  if (answered > 0) {
    spdlog::warn("answered {} queued requests UNAVAILABLE", answered);
  }
}

// Opens generations of the rank group one after another until one forms
// (every rank joined and agreed, the lost one back from its supervisor) or
// the host is told to stop (nullptr).
std::unique_ptr<ServingGeneration> ReformGroup(
    const engine::RankSetup& setup,
    const std::shared_ptr<dist::GroupStore>& store,
    const ServingGeneration::Shared& shared,
    const std::function<absl::Status()>& keep_waiting) {
  while (!stop_requested) {
    absl::StatusOr<int64_t> generation = store->OpenNext();
    if (!generation.ok()) {
      spdlog::error("re-forming the rank group: {}",
                    generation.status().ToString());
      AnswerQueuedAfterFailedAttempt(*shared.queue, generation.status());
      absl::SleepFor(absl::Seconds(1));
      continue;
    }
    spdlog::info("waiting up to {} ms for every rank to join generation {}",
                 setup.rendezvous.connect_timeout.count(), *generation);
    const absl::Time started = base::MonotonicNow();
    absl::StatusOr<std::unique_ptr<ServingGeneration>> formed =
        ServingGeneration::Form(setup, store, *generation, shared,
                                keep_waiting);
    if (formed.ok()) {
      spdlog::info("rank group generation {} formed in {}; serving again",
                   *generation,
                   absl::FormatDuration(base::MonotonicNow() - started));
      return *std::move(formed);
    }
    spdlog::warn("rank group generation {} did not form: {}", *generation,
                 formed.status().ToString());
    AnswerQueuedAfterFailedAttempt(*shared.queue, formed.status());
  }
  return nullptr;
}

int RunHost() {
  absl::StatusOr<dist::RankEnv> env =
      dist::ResolveRankEnvFromProcess(engine::RankEnvOverridesFromFlags());
  if (!env.ok()) return Fail(env.status(), "rank environment");
  if (absl::Status s =
          base::ConfigureLogging(env->rank, absl::GetFlag(FLAGS_log_format));
      !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 2;
  }
  if (env->rank != 0) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
                    "ditserve-host runs rank 0 but RANK is ", env->rank,
                    "; start ditserve-worker for ranks > 0")),
                "rank environment");
  }
  spdlog::info("{}", base::KeepFreedMemoryForReuse());
  spdlog::info("{}", base::OpenMpWaitPolicy());
  engine::SetComputeThreads(engine::IntraOpThreads(*env));
  // OpenSSL also writes to an HTTPS client that has gone away with write():
  // a client leaving must never end the host either.
  dist::IgnoreSigpipe();
  // Until it serves, nothing was admitted: a stop signal ends the host at
  // once, also as a container's PID 1, which ignores a signal it does not
  // catch (a rollout would wait out its whole grace period on a host that
  // loads a model for minutes). Once the group forms, it drains instead.
  std::signal(SIGTERM, EndBeforeServing);
  std::signal(SIGINT, EndBeforeServing);
  // From the start, so that a reload asked for while the model loads (whose
  // default action would end the host) waits for the reloader.
  std::signal(SIGHUP, RequestReload);

  absl::StatusOr<engine::RankSetup> setup = engine::RankSetupFromFlags(*env);
  if (!setup.ok()) return Fail(setup.status(), "start-up");
  const config::ModelSpec& spec = setup->spec;
  // Checked before the rendezvous, so that a bad flag fails in seconds.
  if (absl::Status s = CheckConnectionFlags(); !s.ok()) {
    return Fail(s, "connection flags");
  }
  absl::StatusOr<config::ServerOptions> server_options =
      ServerOptionsFromFlags();
  if (!server_options.ok()) return Fail(server_options.status(), "limits");
  const config::ServerOptions& options = *server_options;
  absl::StatusOr<HostCredentials> credentials = CredentialsFromFlags();
  if (!credentials.ok())
    return Fail(credentials.status(), "TLS and auth flags");
  const BearerAuth& auth = *credentials->auth;
  absl::StatusOr<CorsPolicy> cors =
      CorsPolicy::FromFlag(absl::GetFlag(FLAGS_http_cors_origins));
  if (!cors.ok()) return Fail(cors.status(), "HTTP API flags");

  const std::string model_name(spec.defaults.name);
  spdlog::info(
      "serving {} from {} on {} ranks ({} {}), {} intra-op threads, {} BLAS "
      "threads, a prompt cache of {} MiB on each rank",
      model_name, setup->model_dir, env->world_size, setup->compute.device,
      setup->compute.dtype, at::get_num_threads(), engine::BlasThreads(),
      setup->prompt_cache->capacity_bytes() >> 20);

  absl::StatusOr<std::shared_ptr<dist::GroupStore>> store =
      dist::GroupStore::Connect(*env, setup->rendezvous.connect_timeout);
  if (!store.ok()) return Fail(store.status(), "rendezvous");
  Metrics metrics(model_name, env->world_size,
                  {engine::BuildVersion(), TORCH_VERSION, setup->compute.device,
                   setup->compute.dtype});
  metrics.ExportPromptCache(setup->prompt_cache);
  metrics.AddClients(credentials->auth->ClientNames());
  AdmissionQueue queue(options.max_queue, options.max_queued_per_client,
                       spec.hidden_size(),
                       [&metrics](int depth) { metrics.SetQueueDepth(depth); });
  const ServingGeneration::Shared shared{
      .queue = &queue,
      .metrics = &metrics,
      .scheduler = {.max_batch = options.max_batch,
                    .max_request_bytes = options.max_request_bytes,
                    .ping_interval =
                        absl::Seconds(absl::GetFlag(FLAGS_ping_interval_s))}};
  const absl::Duration max_queue_wait =
      absl::Seconds(absl::GetFlag(FLAGS_max_queue_wait_s));
  const auto shed_overdue = [&] {
    if (max_queue_wait <= absl::ZeroDuration()) return;
    if (const int shed = queue.ExpireWaiting(max_queue_wait); shed > 0) {
      spdlog::warn(
          "refused {} queued requests that waited longer than "
          "--max_queue_wait_s {}",
          shed, absl::ToDoubleSeconds(max_queue_wait));
    }
  };
  // Also while the group re-forms, which requests may wait through.
  const auto keep_waiting = [&]() -> absl::Status {
    if (stop_requested) return absl::CancelledError("the host is stopping");
    shed_overdue();
    return absl::OkStatus();
  };
  // Served from the start, so that a host loading a model for minutes is
  // seen up (DitserveHostDown reads Prometheus' `up`); until every rank
  // joins, only the host is alive (Form sets the rest).
  const std::string listen = absl::GetFlag(FLAGS_listen);
  const std::string metrics_listen = absl::GetFlag(FLAGS_metrics_listen).empty()
                                         ? listen
                                         : absl::GetFlag(FLAGS_metrics_listen);
  metrics.SetRanksAlive(1);
  if (absl::GetFlag(FLAGS_metrics_port) != 0) {
    if (absl::StatusOr<int> port =
            metrics.Serve(metrics_listen, absl::GetFlag(FLAGS_metrics_port));
        !port.ok()) {
      return Fail(port.status(), "metrics");
    }
  }
  // A rank that is missing at start-up fails the start: it is a
  // configuration error, not a loss.
  absl::StatusOr<std::unique_ptr<ServingGeneration>> serving =
      ServingGeneration::Form(*setup, *store, /*generation=*/0, shared,
                              keep_waiting);
  if (!serving.ok()) return Fail(serving.status(), "rank group");
  // From before anything can be admitted.
  std::signal(SIGTERM, RequestStop);
  std::signal(SIGINT, RequestStop);

  HealthService health(&auth);
  const ServedModel served{spec,
                           setup->model_dir,
                           setup->parallel,
                           options,
                           engine::BuildVersion(),
                           TORCH_VERSION,
                           setup->compute.device,
                           setup->compute.dtype,
                           setup->prompt_cache->capacity_bytes()};
  RequestIntake intake(&served, &queue, &metrics);
  GenerationService generation(
      &intake, &auth,
      absl::Seconds(absl::GetFlag(FLAGS_stream_write_timeout_s)));
  HttpApi http_api(&intake, &health, &auth, &*cors,
                   absl::GetFlag(FLAGS_http_access_log));
  std::unique_ptr<HttpServer> http_server;
  if (absl::GetFlag(FLAGS_http_port) != 0) {
    absl::StatusOr<std::unique_ptr<HttpServer>> started = HttpServer::Start(
        listen, absl::GetFlag(FLAGS_http_port), http_api.threads(),
        [&http_api](httplib::Server& server) { http_api.AddRoutes(server); },
        credentials->tls.get(),
        TcpKeepalive{
            .idle = absl::Seconds(absl::GetFlag(FLAGS_keepalive_time_s)),
            .timeout =
                absl::Seconds(absl::GetFlag(FLAGS_keepalive_timeout_s))});
    if (!started.ok()) return Fail(started.status(), "HTTP API");
    http_server = *std::move(started);
  }

  // The plugin registers itself with every ServerBuilder made after this.
  if (!auth.guards_health()) {
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  }
  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(
      absl::StrCat(listen, ":", absl::GetFlag(FLAGS_grpc_port)),
      credentials->grpc, &bound_port);
  builder.SetMaxSendMessageSize(GenerationService::kMaxMessageBytes);
  // gRPC 1.51 has no cap on the number of connections; these bound what
  // each one and each silent or idle one can hold.
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             absl::GetFlag(FLAGS_max_concurrent_streams));
  builder.AddChannelArgument(
      GRPC_ARG_MAX_CONNECTION_IDLE_MS,
      static_cast<int>(absl::GetFlag(FLAGS_max_connection_idle_s) * 1000));
  builder.AddChannelArgument(
      GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
      static_cast<int>(absl::GetFlag(FLAGS_handshake_timeout_s) * 1000));
  // gRPC 1.51 limits only a client's pings while its calls send nothing
  // (GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA); a server's keepalive pings go
  // on through a Generate call's silent run.
  builder.AddChannelArgument(
      GRPC_ARG_KEEPALIVE_TIME_MS,
      static_cast<int>(absl::GetFlag(FLAGS_keepalive_time_s) * 1000));
  builder.AddChannelArgument(
      GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
      static_cast<int>(absl::GetFlag(FLAGS_keepalive_timeout_s) * 1000));
  // Clients' own keepalive pings, down to kShortestClientPingInterval; by
  // default gRPC closes a connection that pings more than every 5 minutes
  // while the server sends it nothing (GOAWAY too_many_pings).
  builder.AddChannelArgument(
      GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
      static_cast<int>(absl::ToInt64Milliseconds(kShortestClientPingInterval)));
  builder.RegisterService(&generation);
  builder.RegisterService(&health);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || bound_port == 0) {
    return Fail(
        absl::UnavailableError(absl::StrCat("cannot listen on ", listen, ":",
                                            absl::GetFlag(FLAGS_grpc_port))),
        "gRPC");
  }

  const CredentialReloader reloader(
      credentials->Reloadable(&metrics),
      absl::Seconds(absl::GetFlag(FLAGS_credential_refresh_s)),
      [] {
        const bool requested = reload_requested != 0;
        reload_requested = 0;
        return requested;
      },
      &metrics);
  // A stop that came while the servers started drains at once.
  health.SetServing(!stop_requested);
  spdlog::info(
      "serving gRPC on {}:{}, HTTP API on port {} (cross-origin calls: {}), "
      "metrics on {}:{}; {}",
      listen, bound_port, absl::GetFlag(FLAGS_http_port), cors->Describe(),
      metrics_listen, absl::GetFlag(FLAGS_metrics_port),
      credentials->Describe());

  absl::Status group_status;
  while (!stop_requested) {
    shed_overdue();
    if (!(*serving)->scheduler().WaitForBrokenGroup(absl::Milliseconds(200))) {
      continue;
    }
    // The scheduler failed the running request and paused admission; re-form
    // the group once the lost rank, if any, returns.
    health.SetServing(false);
    group_status = (*serving)->scheduler().group_status();
    spdlog::error("rank group generation {} broke: {}; re-forming it",
                  (*serving)->generation(), group_status.ToString());
    const int alive = (*serving)->Abandon();
    metrics.SetRanksAlive(alive);
    if (alive < env->world_size) {
      queue.FinishQueued(GroupBrokenRefusal(group_status));
    } else {
      // Every rank still beats, so the next generation forms within seconds:
      // the queued requests wait for it instead of being lost with the failed
      // one (a failed attempt answers them, AnswerQueuedAfterFailedAttempt).
      spdlog::warn(
          "every rank is alive: keeping {} queued requests for the "
          "re-formed group",
          queue.depth());
    }
    serving->reset();
    *serving = ReformGroup(*setup, *store, shared, keep_waiting);
    if (*serving == nullptr) {
      // Told to stop while re-forming: new requests hear that, not that
      // the group broke and to retry in a few seconds.
      queue.StartDraining();
      queue.FinishQueued(ShutDownBeforeRunning());
      // The broken group was abandoned and logged; the host stopped as it
      // was asked to, so it exits 0.
      group_status = absl::OkStatus();
      break;
    }
    group_status = absl::OkStatus();
    metrics.SetGroupGeneration((*serving)->generation());
    queue.Resume();
    // A stop that came as the group formed drains at once, never showing
    // SERVING between NOT_SERVING and the drain.
    health.SetServing(!stop_requested);
  }

  spdlog::info("stopping: draining admitted requests");
  health.SetServing(false);
  if (*serving != nullptr) {
    (*serving)->scheduler().Drain(
        absl::Seconds(absl::GetFlag(FLAGS_drain_timeout_s)), shed_overdue);
    group_status = (*serving)->scheduler().group_status();
  }
  // As long as a stream may take to send its last event.
  http_api.WaitForOpenStreams(absl::Seconds(kHttpIoTimeoutSeconds));
  http_server.reset();
  health.Shutdown();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  if (!group_status.ok()) {
    // Destroying the broken group's Gloo groups would wait out their
    // collectives' timeout, past the supervisor's stop timeout.
    if (*serving != nullptr) (*serving)->Abandon();
    return Fail(group_status, "rank group");
  }
  spdlog::info("stopped cleanly");
  return 0;
}

}  // namespace
}  // namespace ditserve::server

int main(int argc, char** argv) {
  ditserve::base::InstallCrashReport(argv[0]);
  absl::SetProgramUsageMessage(
      "ditserve-host: rank 0 of a ditserve group (set RANK=0, WORLD_SIZE, "
      "MASTER_ADDR, MASTER_PORT as torchrun does)");
  absl::ParseCommandLine(argc, argv);
  return ditserve::server::RunHost();
}
