#ifndef DITSERVE_SERVER_METRICS_H_
#define DITSERVE_SERVER_METRICS_H_

// The host's Prometheus metrics (names and labels as in DESIGN.md, plus the
// requests' client). Labels are bounded: model, stage, status, rank and the
// clients named in the token file, never a prompt or request id.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/base/process_memory.h"
#include "core/engine/prompt_embedding_cache.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/http_server.h"

namespace ditserve::server {

inline constexpr char kStageDurationMetric[] =
    "ditserve_stage_duration_seconds";
inline constexpr char kRankStageDurationMetric[] =
    "ditserve_rank_stage_duration_seconds";
inline constexpr char kDenoiseStepDurationMetric[] =
    "ditserve_denoise_step_duration_seconds";
// Named with its suffix: Debian's prometheus-cpp 1.0 writes counter names as
// registered (it does not append "_total").
inline constexpr char kRequestsMetric[] = "ditserve_requests_total";
inline constexpr char kRunBatchRequestsMetric[] = "ditserve_run_batch_requests";
inline constexpr char kQueueDepthMetric[] = "ditserve_queue_depth";
inline constexpr char kRequestsRunningMetric[] = "ditserve_requests_running";
inline constexpr char kRanksAliveMetric[] = "ditserve_ranks_alive";
inline constexpr char kWorldSizeMetric[] = "ditserve_world_size";
inline constexpr char kGroupGenerationMetric[] = "ditserve_group_generation";
inline constexpr char kRankMemoryMetric[] = "ditserve_rank_memory_bytes";
inline constexpr char kBuildInfoMetric[] = "ditserve_build_info";
inline constexpr char kPromptCacheLookupsMetric[] =
    "ditserve_prompt_cache_lookups_total";
inline constexpr char kPromptCacheBytesMetric[] = "ditserve_prompt_cache_bytes";
inline constexpr char kCredentialReloadsMetric[] =
    "ditserve_credential_reloads_total";
inline constexpr char kPartialImagesMetric[] = "ditserve_partial_images_total";
inline constexpr char kPartialImageDelayMetric[] =
    "ditserve_partial_image_delay_seconds";
inline constexpr char kUndeliveredStreamsMetric[] =
    "ditserve_undelivered_streams_total";
// The results kPartialImagesMetric counts, as its label says them.
inline constexpr char kPartialImageSent[] = "sent";
inline constexpr char kPartialImageFailed[] = "failed";
inline constexpr char kPartialImageSkipped[] = "skipped";
// The credentials kCredentialReloadsMetric counts, as its label says them.
inline constexpr char kAuthTokensCredential[] = "auth_tokens";
inline constexpr char kTlsCredential[] = "tls";
// Why kUndeliveredStreamsMetric counts a stream, as its label says it: the
// host cancelled it (--stream_write_timeout_s), or the connection ended
// otherwise: the client left, or the host shut down under it.
inline constexpr char kStreamWriteTimedOut[] = "write_timeout";
inline constexpr char kStreamClientGone[] = "client_gone";

struct BuildInfo {
  std::string version;
  std::string torch;
  std::string backend;
  std::string dtype;
};

class Metrics {
 public:
  Metrics(std::string model, int world_size, const BuildInfo& build);

  // Serves GET /metrics (Prometheus text format 0.0.4) on `host`:`port`
  // ("0.0.0.0", 9400; 0 picks a free port) and returns the bound port.
  // UNAVAILABLE if the address cannot be bound.
  absl::StatusOr<int> Serve(const std::string& host, int port);

  // Stage durations measured on rank 0 (the request's own view).
  void ObserveStage(const std::string& stage, double seconds);
  // Stage durations gathered from every rank (slowest-rank view).
  void ObserveRankStage(int rank, const std::string& stage, double seconds);
  void ObserveDenoiseStep(double seconds);
  // Requests that shared one run of the rank group (scheduler.h).
  void ObserveRunBatch(int requests);
  // `status` is the lower-case gRPC code name ("ok", "invalid_argument",
  // ...); `client` the name of the request's bearer token, kNoClient
  // (bearer_auth.h) for none (the operator's token file bounds the names).
  void CountRequest(const std::string& status, const std::string& client);
  // Makes every request series of each of `clients` at zero, as those of
  // kNoClient are from the start, so that rate() sees a client's first
  // request: given the token file's names at start-up and after each re-read
  // that changes them. A client dropped from the file keeps its series, as
  // counters do not go back.
  void AddClients(const std::vector<std::string>& clients);
  void SetQueueDepth(int depth);
  void SetRequestsRunning(int running);
  void SetRanksAlive(int alive);
  // The generation of the rank group that serves (0 until it is re-formed).
  void SetGroupGeneration(int64_t generation);
  // A rank's resident memory as it reported after its last request.
  void SetRankMemory(int rank, const base::ProcessMemory& memory);
  // Rank 0's prompt cache, read at each scrape: its lookups by result (hit,
  // miss) and the bytes it holds. The series read 0 until this is called.
  void ExportPromptCache(
      std::shared_ptr<const engine::PromptEmbeddingCache> cache);

  // A re-read of credential files while serving (credential_reloader.h),
  // `credential` one of the k*Credential names: result="applied" when
  // changed contents start to serve, "rejected" at each re-read whose files
  // fail the checks (the current credentials still serve).
  void CountCredentialReload(const std::string& credential, bool applied);
  // One preview of a run (partial_image_decoder.h), `result` one of the
  // kPartialImage* names: sent, failed (its decode or encoding did), skipped
  // (every request of the run had finished). A sent one's delay is the time
  // from the end of its step to its events, decode and encoding included.
  void CountPartialImage(const std::string& result);
  void ObservePartialImageDelay(double seconds);
  // A GenerateStream counted "ok" by CountRequest whose outputs did not all
  // reach its client: its stream broke before the result went out, `reason`
  // kStreamWriteTimedOut or kStreamClientGone.
  void CountUndeliveredStream(const std::string& reason);
  prometheus::Registry& registry() { return *registry_; }

 private:
  prometheus::Histogram& StageSeries(const std::string& stage);
  prometheus::Histogram& RankStageSeries(int rank, const std::string& stage);
  prometheus::Counter& CredentialReloadSeries(const std::string& credential,
                                              bool applied);
  // One label set for every series of kRequestsMetric: Prometheus reads
  // client="" as no client label, so a series without the label would be
  // the same series again.
  prometheus::Counter& RequestSeries(const std::string& status,
                                     const std::string& client);

  const std::string model_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<HttpServer> http_server_;
  prometheus::Family<prometheus::Histogram>& stage_;
  prometheus::Family<prometheus::Histogram>& rank_stage_;
  prometheus::Histogram& denoise_step_;
  prometheus::Histogram& run_batch_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Gauge& queue_depth_;
  prometheus::Gauge& requests_running_;
  prometheus::Gauge& ranks_alive_;
  prometheus::Gauge& group_generation_;
  prometheus::Family<prometheus::Gauge>& rank_memory_;
  prometheus::Family<prometheus::Counter>& credential_reloads_;
  prometheus::Family<prometheus::Counter>& partial_images_;
  prometheus::Histogram& partial_image_delay_;
  prometheus::Family<prometheus::Counter>& undelivered_streams_;
  // Shared with the scrape handler, which may outlive a scrape in progress.
  struct PromptCacheSeries;
  std::shared_ptr<PromptCacheSeries> prompt_cache_;
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_METRICS_H_
