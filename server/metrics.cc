#include "server/metrics.h"

#include <httplib.h>

#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/base/status_macros.h"
#include "core/engine/stage.h"
#include "prometheus/labels.h"
#include "prometheus/text_serializer.h"
#include "server/bearer_auth.h"
#include "server/status_conversion.h"

namespace ditserve::server {
namespace {

// Scrapes are short, but a silent or slow client holds its thread until the
// I/O timeout; a few spare threads keep Prometheus answered meanwhile.
constexpr int kScrapeThreads = 8;

// Latency buckets from 1 ms to about 17 minutes, doubling.
prometheus::Histogram::BucketBoundaries LatencyBuckets() {
  prometheus::Histogram::BucketBoundaries bounds;
  for (double b = 0.001; b < 1100.0; b *= 2.0) bounds.push_back(b);
  return bounds;
}

}  // namespace

struct Metrics::PromptCacheSeries {
  prometheus::Counter& hits;
  prometheus::Counter& misses;
  prometheus::Gauge& bytes;
  absl::Mutex mutex;
  std::shared_ptr<const engine::PromptEmbeddingCache> cache
      ABSL_GUARDED_BY(mutex);
  // What the counters already hold.
  engine::PromptCacheStats exported ABSL_GUARDED_BY(mutex);

  void Refresh() {
    absl::MutexLock lock(&mutex);
    if (cache == nullptr) return;
    const engine::PromptCacheStats now = cache->stats();
    hits.Increment(static_cast<double>(now.hits - exported.hits));
    misses.Increment(static_cast<double>(now.misses - exported.misses));
    bytes.Set(static_cast<double>(now.bytes));
    exported = now;
  }
};

Metrics::Metrics(std::string model, int world_size, const BuildInfo& build)
    : model_(std::move(model)),
      registry_(std::make_shared<prometheus::Registry>()),
      stage_(prometheus::BuildHistogram()
                 .Name(kStageDurationMetric)
                 .Help("Wall time of each request stage on rank 0, seconds")
                 .Register(*registry_)),
      rank_stage_(prometheus::BuildHistogram()
                      .Name(kRankStageDurationMetric)
                      .Help("Wall time of each request stage per rank, seconds")
                      .Register(*registry_)),
      denoise_step_(prometheus::BuildHistogram()
                        .Name(kDenoiseStepDurationMetric)
                        .Help("Wall time of one denoising step, seconds")
                        .Register(*registry_)
                        .Add({{"model", model_}}, LatencyBuckets())),
      run_batch_(prometheus::BuildHistogram()
                     .Name(kRunBatchRequestsMetric)
                     .Help("Requests that shared one run of the rank group")
                     .Register(*registry_)
                     .Add({{"model", model_}},
                          prometheus::Histogram::BucketBoundaries{
                              1, 2, 3, 4, 6, 8, 12, 16, 32})),
      requests_(prometheus::BuildCounter()
                    .Name(kRequestsMetric)
                    .Help("Finished requests by gRPC status")
                    .Register(*registry_)),
      queue_depth_(prometheus::BuildGauge()
                       .Name(kQueueDepthMetric)
                       .Help("Requests admitted and waiting to run")
                       .Register(*registry_)
                       .Add({})),
      requests_running_(prometheus::BuildGauge()
                            .Name(kRequestsRunningMetric)
                            .Help("Requests running on the ranks")
                            .Register(*registry_)
                            .Add({})),
      ranks_alive_(prometheus::BuildGauge()
                       .Name(kRanksAliveMetric)
                       .Help("Ranks that answered the last liveness check")
                       .Register(*registry_)
                       .Add({})),
      group_generation_(prometheus::BuildGauge()
                            .Name(kGroupGenerationMetric)
                            .Help("Generation of the rank group that serves; "
                                  "each re-formation after a lost rank adds "
                                  "one")
                            .Register(*registry_)
                            .Add({})),
      rank_memory_(prometheus::BuildGauge()
                       .Name(kRankMemoryMetric)
                       .Help("Memory of each rank after its last request "
                             "(kind: resident, peak_resident; on a GPU also "
                             "device_allocated, device_peak_allocated, "
                             "device_reserved; the peaks since start), bytes")
                       .Register(*registry_)),
      credential_reloads_(prometheus::BuildCounter()
                              .Name(kCredentialReloadsMetric)
                              .Help("Credential files re-read while "
                                    "serving: changed ones that now serve "
                                    "(applied), re-reads that failed the "
                                    "checks (rejected)")
                              .Register(*registry_)),
      partial_images_(prometheus::BuildCounter()
                          .Name(kPartialImagesMetric)
                          .Help("Previews of a run after one of its steps "
                                "(partial_images), by result: sent, failed, "
                                "skipped (its requests had finished)")
                          .Register(*registry_)),
      partial_image_delay_(
          prometheus::BuildHistogram()
              .Name(kPartialImageDelayMetric)
              .Help("Time from the end of a preview's step to its events, "
                    "seconds")
              .Register(*registry_)
              .Add({{"model", model_}}, LatencyBuckets())),
      undelivered_streams_(
          prometheus::BuildCounter()
              .Name(kUndeliveredStreamsMetric)
              .Help("GenerateStream calls counted ok whose outputs the host "
                    "could not all hand to the connection, by reason "
                    "(write_timeout, client_gone)")
              .Register(*registry_)) {
  // Every series exists from the start, so dashboards and alerts see zero
  // counts rather than missing series: rate() cannot see the increase to a
  // series' first sample, so a first error would never reach the error ratio.
  for (const engine::Stage stage : engine::kAllStages) {
    const std::string name(engine::StageName(stage));
    StageSeries(name);
    for (int rank = 0; rank < world_size; ++rank) RankStageSeries(rank, name);
  }
  AddClients({kNoClient});
  for (const char* result :
       {kPartialImageSent, kPartialImageFailed, kPartialImageSkipped}) {
    partial_images_.Add({{"model", model_}, {"result", result}});
  }
  for (const char* reason : {kStreamWriteTimedOut, kStreamClientGone}) {
    undelivered_streams_.Add({{"model", model_}, {"reason", reason}});
  }
  for (const char* credential : {kAuthTokensCredential, kTlsCredential}) {
    for (const bool applied : {true, false}) {
      CredentialReloadSeries(credential, applied);
    }
  }
  prometheus::BuildGauge()
      .Name(kWorldSizeMetric)
      .Help("Ranks in the group")
      .Register(*registry_)
      .Add({})
      .Set(world_size);
  prometheus::BuildGauge()
      .Name(kBuildInfoMetric)
      .Help("Build information; the value is always 1")
      .Register(*registry_)
      .Add({{"version", build.version},
            {"torch", build.torch},
            {"backend", build.backend},
            {"dtype", build.dtype}})
      .Set(1);
  auto& lookups =
      prometheus::BuildCounter()
          .Name(kPromptCacheLookupsMetric)
          .Help(
              "Prompt rows rank 0 took from its prompt cache (result: hit) "
              "or ran the text encoders for (miss)")
          .Register(*registry_);
  // Not movable (its mutex), so built in place.
  prompt_cache_.reset(new PromptCacheSeries{
      .hits = lookups.Add({{"result", "hit"}}),
      .misses = lookups.Add({{"result", "miss"}}),
      .bytes = prometheus::BuildGauge()
                   .Name(kPromptCacheBytesMetric)
                   .Help("Bytes of text encoder outputs in rank 0's prompt "
                         "cache")
                   .Register(*registry_)
                   .Add({})});
}

absl::StatusOr<int> Metrics::Serve(const std::string& host, int port) {
  std::shared_ptr<prometheus::Registry> registry = registry_;
  std::shared_ptr<PromptCacheSeries> prompt_cache = prompt_cache_;
  ASSIGN_OR_RETURN(
      http_server_,
      HttpServer::Start(
          host, port, kScrapeThreads,
          [registry, prompt_cache](httplib::Server& server) {
            server.Get("/metrics", [registry, prompt_cache](
                                       const httplib::Request&,
                                       httplib::Response& response) {
              prompt_cache->Refresh();
              response.set_content(
                  prometheus::TextSerializer().Serialize(registry->Collect()),
                  "text/plain; version=0.0.4");
            });
          }));
  return http_server_->port();
}

void Metrics::ExportPromptCache(
    std::shared_ptr<const engine::PromptEmbeddingCache> cache) {
  absl::MutexLock lock(&prompt_cache_->mutex);
  prompt_cache_->cache = std::move(cache);
  prompt_cache_->exported = engine::PromptCacheStats{};
}

prometheus::Histogram& Metrics::StageSeries(const std::string& stage) {
  return stage_.Add({{"model", model_}, {"stage", stage}}, LatencyBuckets());
}

void Metrics::ObserveStage(const std::string& stage, double seconds) {
  StageSeries(stage).Observe(seconds);
}

prometheus::Histogram& Metrics::RankStageSeries(int rank,
                                                const std::string& stage) {
  return rank_stage_.Add(
      {{"model", model_}, {"stage", stage}, {"rank", absl::StrCat(rank)}},
      LatencyBuckets());
}

void Metrics::ObserveRankStage(int rank, const std::string& stage,
                               double seconds) {
  RankStageSeries(rank, stage).Observe(seconds);
}

void Metrics::ObserveDenoiseStep(double seconds) {
  denoise_step_.Observe(seconds);
}

void Metrics::ObserveRunBatch(int requests) { run_batch_.Observe(requests); }

prometheus::Counter& Metrics::RequestSeries(const std::string& status,
                                            const std::string& client) {
  return requests_.Add(
      {{"model", model_}, {"status", status}, {"client", client}});
}

void Metrics::CountRequest(const std::string& status,
                           const std::string& client) {
  RequestSeries(status, client).Increment();
}

void Metrics::AddClients(const std::vector<std::string>& clients) {
  for (const std::string& client : clients) {
    for (int code = 0;
         code <= static_cast<int>(absl::StatusCode::kUnauthenticated); ++code) {
      RequestSeries(StatusLabel(static_cast<absl::StatusCode>(code)), client);
    }
  }
}

prometheus::Counter& Metrics::CredentialReloadSeries(
    const std::string& credential, bool applied) {
  return credential_reloads_.Add(
      {{"credential", credential},
       {"result", applied ? "applied" : "rejected"}});
}

void Metrics::CountCredentialReload(const std::string& credential,
                                    bool applied) {
  CredentialReloadSeries(credential, applied).Increment();
}

void Metrics::CountPartialImage(const std::string& result) {
  partial_images_.Add({{"model", model_}, {"result", result}}).Increment();
}

void Metrics::ObservePartialImageDelay(double seconds) {
  partial_image_delay_.Observe(seconds);
}

void Metrics::CountUndeliveredStream(const std::string& reason) {
  undelivered_streams_.Add({{"model", model_}, {"reason", reason}}).Increment();
}

void Metrics::SetQueueDepth(int depth) { queue_depth_.Set(depth); }

void Metrics::SetRequestsRunning(int running) {
  requests_running_.Set(running);
}

void Metrics::SetRanksAlive(int alive) { ranks_alive_.Set(alive); }

void Metrics::SetGroupGeneration(int64_t generation) {
  group_generation_.Set(static_cast<double>(generation));
}

void Metrics::SetRankMemory(int rank, const base::ProcessMemory& memory) {
  const std::string rank_label = absl::StrCat(rank);
  const auto labels = [&](const char* kind) -> prometheus::Labels {
    return {{"model", model_}, {"rank", rank_label}, {"kind", kind}};
  };
  const auto set = [&](const char* kind, int64_t bytes) {
    rank_memory_.Add(labels(kind)).Set(static_cast<double>(bytes));
  };
  set("resident", memory.resident_bytes);
  set("peak_resident", memory.peak_resident_bytes);
  const std::pair<const char*, int64_t> device_kinds[] = {
      {"device_allocated", memory.device_allocated_bytes},
      {"device_peak_allocated", memory.device_peak_allocated_bytes},
      {"device_reserved", memory.device_reserved_bytes}};
  for (const auto& [kind, bytes] : device_kinds) {
    if (memory.on_gpu()) {
      set(kind, bytes);
    } else if (rank_memory_.Has(labels(kind))) {
      // A GPU rank that could not read its allocator's statistics reports
      // none (engine::ReadRankMemory): without its series a dashboard shows
      // the gap, with them it would show the last read as current.
      rank_memory_.Remove(&rank_memory_.Add(labels(kind)));
    }
  }
}

}  // namespace ditserve::server
