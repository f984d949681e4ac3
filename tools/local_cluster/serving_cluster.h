#ifndef DITSERVE_TOOLS_LOCAL_CLUSTER_SERVING_CLUSTER_H_
#define DITSERVE_TOOLS_LOCAL_CLUSTER_SERVING_CLUSTER_H_

// A real ditserve group on loopback for tests: ditserve-host on rank 0 and
// ditserve-worker on the others, on the built-in default model (made once
// into a cache shared by the tests), with gRPC stubs to it.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ditserve/v1/generation.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/security/credentials.h"
#include "tools/local_cluster/rank_launcher.h"

namespace ditserve::local_cluster {

struct ClusterOptions {
  int world_size = 1;
  // Flags for every rank (parallel degrees, timeouts).
  std::vector<std::string> rank_flags;
  // Flags for the host only (queue size, drain timeout).
  std::vector<std::string> host_flags;
  // Flags for the workers only (after rank_flags, so they override them).
  std::vector<std::string> worker_flags;
  // Where each rank runs; rank 0 must share this process's network
  // namespace, since the cluster's gRPC clients call it on 127.0.0.1.
  GroupPlacement placement;
  // How the cluster's own stubs connect; nullptr = plaintext.
  std::shared_ptr<grpc::ChannelCredentials> credentials;
};

class ServingCluster {
 public:
  // Starts the ranks and waits until health reports SERVING.
  static absl::StatusOr<std::unique_ptr<ServingCluster>> Start(
      const ClusterOptions& options);

  v1::Generation::Stub& generation() { return *generation_; }
  grpc::health::v1::Health::Stub& health() { return *health_; }
  RankLauncher& ranks() { return *ranks_; }
  std::string address() const;
  int grpc_port() const { return grpc_port_; }
  int metrics_port() const { return metrics_port_; }
  // The OpenAI-compatible HTTP API (server/http_api.h).
  int http_port() const { return http_port_; }

  // One Generate call with a deadline `seconds` from now; a failed call's
  // gRPC status as an absl::Status.
  absl::StatusOr<v1::GenerateResponse> Generate(
      const v1::GenerateRequest& request, double seconds);
  // The body of GET /metrics.
  absl::StatusOr<std::string> ScrapeMetrics() const;
  // SERVING, NOT_SERVING, or the failed call's error.
  absl::StatusOr<grpc::health::v1::HealthCheckResponse::ServingStatus>
  HealthStatus();
  // SIGTERMs rank 0 (the host), as an operator stopping the group would.
  void Terminate();

 private:
  ServingCluster() = default;

  int grpc_port_ = 0;
  int metrics_port_ = 0;
  int http_port_ = 0;
  std::unique_ptr<RankLauncher> ranks_;
  std::unique_ptr<v1::Generation::Stub> generation_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
};

// Polls `cluster`'s health until it reads `wanted`; the seconds that took,
// or a negative number after `limit_seconds`.
double SecondsUntilHealth(
    ServingCluster& cluster,
    grpc::health::v1::HealthCheckResponse::ServingStatus wanted,
    double limit_seconds);

// The ranks of `options` started on ports picked here, without waiting for
// them to serve: for tests of groups that must not start.
absl::StatusOr<std::unique_ptr<RankLauncher>> LaunchRanks(
    const ClusterOptions& options);

// Sum of the samples of `metric` in a /metrics scrape whose labels contain
// every `labels` entry (e.g. "status=\"cancelled\"").
double MetricValue(const std::string& exposition, const std::string& metric,
                   const std::vector<std::string>& labels);

// A context whose deadline is `seconds` from now.
std::unique_ptr<grpc::ClientContext> ContextWithDeadline(double seconds);

// A request for a small, quick image of the default model.
v1::GenerateRequest SmallRequest(const std::string& prompt);

// Three prompts of 80×48 pixels, 2 steps, 32 text tokens, float32 latents
// out: for parity of parallel methods. With 15 image tokens the joint
// sequence is 47, which no sequence-parallel degree divides (every split
// pads and masks), the image is not square (the shards' position ids
// matter), and data parallel 2 splits the prompts 2 + 1.
v1::GenerateRequest ParallelParityRequest();

// The message a group started with `options` fails its start-up with, or
// "the group started" when it starts.
std::string StartUpFailure(const ClusterOptions& options);

// The values of an OUTPUT_FORMAT_LATENT_F32 image.
std::vector<float> LatentFloats(const v1::Image& image);

// Largest |parallel - single| allowed in any latent value under sequence and
// data parallelism. Both runs compute the same float32 math; only the order
// of sums differs (attention over shards merged by all-to-all or
// log-sum-exp, matmuls over fewer rows, batches split by dp), which moves a
// value by a few float32 ulps per forward: at most 7.2e-7 measured over the
// sequence-parallel serving cases, for latents of magnitude up to ~4 (ulp
// 4.8e-7). A shard with wrong weights, positions,
// an unmasked padded key or a misplaced shard moves values by 1e-2 or more.
inline constexpr float kParallelLatentTolerance = 1e-5F;

// Largest |a - b| over every latent value of two OUTPUT_FORMAT_LATENT_F32
// responses; infinity when their images differ in number or size, or a
// value is not finite.
float MaxLatentDifference(const v1::GenerateResponse& a,
                          const v1::GenerateResponse& b);

// PSNR in dB of `actual` against `expected` over every byte of every image
// (8-bit RGB); infinity when they are equal, 0 when their images differ in
// number or size.
double RgbPsnr(const v1::GenerateResponse& expected,
               const v1::GenerateResponse& actual);

// The transformer bytes rank `rank` of `cluster` reported loading at
// start-up (engine::LogStageWeights); -1 when it reported none.
int64_t TransformerBytes(ServingCluster& cluster, int rank);

}  // namespace ditserve::local_cluster

#endif  // DITSERVE_TOOLS_LOCAL_CLUSTER_SERVING_CLUSTER_H_
