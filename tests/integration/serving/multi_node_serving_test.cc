// Multi-node on one machine: ranks 0 and 1 on node A (this process's
// network namespace) and ranks 2 and 3 on node B (a namespace of their
// own), so that every byte between the nodes crosses one link between two
// network stacks. Under --ring_degree=2 --ulysses_degree=2 each ring pair
// spans the nodes, so every attention of every step crosses the link. The
// tests skip where network namespaces cannot be made (a container without
// CAP_SYS_ADMIN and CAP_NET_ADMIN).

#include <chrono>
#include <iostream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tools/local_cluster/serving_cluster.h"
#include "tools/local_cluster/two_node_network.h"

namespace ditserve::testing {
namespace {

using ::ditserve::local_cluster::ClusterOptions;
using ::ditserve::local_cluster::ContextWithDeadline;
using ::ditserve::local_cluster::kParallelLatentTolerance;
using ::ditserve::local_cluster::MaxLatentDifference;
using ::ditserve::local_cluster::MetricValue;
using ::ditserve::local_cluster::SecondsUntilHealth;
using ::ditserve::local_cluster::ServingCluster;
using ::ditserve::local_cluster::SmallRequest;
using ::ditserve::local_cluster::TwoNodeNetwork;
using HealthStatus = ::grpc::health::v1::HealthCheckResponse;
using ::testing::ContainsRegex;

constexpr double kCallSeconds = 120;
constexpr int kWorld = 4;
constexpr int kRanksOnNodeA = 2;

// A small image as latents, for comparing with a single rank.
v1::GenerateRequest ParityRequest() {
  v1::GenerateRequest request = SmallRequest("a harbour between two nodes");
  request.set_output_format(v1::OUTPUT_FORMAT_LATENT_F32);
  return request;
}

// What a single rank returns for ParityRequest().
absl::StatusOr<v1::GenerateResponse> SingleRank() {
  absl::StatusOr<std::unique_ptr<ServingCluster>> single =
      ServingCluster::Start({.world_size = 1});
  if (!single.ok()) return single.status();
  return (*single)->Generate(ParityRequest(), kCallSeconds);
}

ClusterOptions AcrossTwoNodes(
    const TwoNodeNetwork& network,
    const std::vector<std::string>& extra_rank_flags) {
  std::vector<std::string> rank_flags = {"--ring_degree=2",
                                         "--ulysses_degree=2"};
  rank_flags.insert(rank_flags.end(), extra_rank_flags.begin(),
                    extra_rank_flags.end());
  return {.world_size = kWorld,
          .rank_flags = rank_flags,
          .placement = network.Place(kWorld, kRanksOnNodeA)};
}

// Above the round trip a link adds, for the kernel and, on a delayed link,
// the relay threads on a busy machine (a veth round trip measured 82 us).
constexpr std::chrono::milliseconds kRoundTripSlack{100};
// Well below what ParityRequest() moves across the link (270 kB measured),
// and well above what it would move if no shard crossed: the request, the
// gathered latents (3 kB) and heartbeats.
constexpr int64_t kShardBytes = 100000;

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

struct LinkCase {
  std::string name;
  // One-way latency of the link between the nodes; zero is a veth pair.
  std::chrono::milliseconds delay{0};
};

// ctest lists each case by this name rather than by its bytes.
void PrintTo(const LinkCase& link, std::ostream* out) { *out << link.name; }

class MultiNodeParityTest : public ::testing::TestWithParam<LinkCase> {};

TEST_P(MultiNodeParityTest, WorldFourAcrossTwoNodesEqualsWorldOne) {
  const std::chrono::milliseconds delay = GetParam().delay;
  absl::StatusOr<std::unique_ptr<TwoNodeNetwork>> network =
      TwoNodeNetwork::Create(delay);
  if (absl::IsFailedPrecondition(network.status())) {
    GTEST_SKIP() << network.status();
  }
  ASSERT_TRUE(network.ok()) << network.status();
  // The link delays what it carries as asked, before the ranks load it.
  absl::StatusOr<std::chrono::microseconds> round_trip =
      (*network)->RoundTrip();
  ASSERT_TRUE(round_trip.ok()) << round_trip.status();
  std::cout << GetParam().name << ": round trip " << round_trip->count()
            << " us" << std::endl;
  RecordProperty("round_trip_us", std::to_string(round_trip->count()));
  EXPECT_GE(*round_trip, 2 * delay);
  EXPECT_LT(*round_trip, 2 * delay + kRoundTripSlack);

  absl::StatusOr<v1::GenerateResponse> single = SingleRank();
  ASSERT_TRUE(single.ok()) << single.status();
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(AcrossTwoNodes(**network, {}));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const absl::StatusOr<int64_t> bytes_before = (*network)->BytesCarried();
  ASSERT_TRUE(bytes_before.ok()) << bytes_before.status();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<v1::GenerateResponse> across =
      (*cluster)->Generate(ParityRequest(), kCallSeconds);
  const double seconds = SecondsSince(start);
  ASSERT_TRUE(across.ok()) << across.status();
  const absl::StatusOr<int64_t> bytes_after = (*network)->BytesCarried();
  ASSERT_TRUE(bytes_after.ok()) << bytes_after.status();
  std::cout << GetParam().name << ": request served in " << seconds
            << " s, the link carrying " << *bytes_after - *bytes_before
            << " bytes" << std::endl;
  RecordProperty("request_seconds", std::to_string(seconds));
  // The request's shards went from node to node, not only its heartbeats.
  EXPECT_GT(*bytes_after - *bytes_before, kShardBytes);
  EXPECT_LE(MaxLatentDifference(*single, *across), kParallelLatentTolerance);
}

INSTANTIATE_TEST_SUITE_P(
    Links, MultiNodeParityTest,
    ::testing::Values(LinkCase{.name = "veth"},
                      LinkCase{.name = "delay_50ms",
                               .delay = std::chrono::milliseconds(50)}),
    [](const ::testing::TestParamInfo<LinkCase>& info) {
      return info.param.name;
    });

// The hung-rank timeout the link-cut test runs under: detection should take
// about this long, not the collective timeout (60 s).
constexpr double kHungRankSeconds = 3;
// From the cut to the failed request: the hung-rank window, a heartbeat
// for the watchdog to read it and the rank loop reaching its next wait, on
// two busy cores (3.7 to 4.4 s measured).
constexpr double kDetectionSeconds = kHungRankSeconds + 3;
// From the link's return to SERVING. The ranks of node B keep their
// processes and TCP connections through a cut shorter than
// --connect_timeout_s (120 s); their unanswered segments are resent on
// TCP's doubling timer (from 200 ms), so after a cut of about 5 s the next
// resend comes within about 5 s of the return, and the re-formation takes
// 1.2 s more (ctest -R reformation). Measured: 1.7 to 2.4 s.
constexpr double kRecoverySeconds = 10;

double GroupGeneration(ServingCluster& cluster) {
  absl::StatusOr<std::string> metrics = cluster.ScrapeMetrics();
  EXPECT_TRUE(metrics.ok()) << metrics.status();
  return metrics.ok() ? MetricValue(*metrics, "ditserve_group_generation", {})
                      : -1;
}

TEST(MultiNodeLinkCutTest, CutFailsTheRequestAndTheGroupRecoversAfter) {
  absl::StatusOr<std::unique_ptr<TwoNodeNetwork>> network =
      TwoNodeNetwork::Create();
  if (absl::IsFailedPrecondition(network.status())) {
    GTEST_SKIP() << network.status();
  }
  ASSERT_TRUE(network.ok()) << network.status();
  absl::StatusOr<v1::GenerateResponse> single = SingleRank();
  ASSERT_TRUE(single.ok()) << single.status();
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(AcrossTwoNodes(
          **network,
          {absl::StrCat("--hung_rank_timeout_s=", kHungRankSeconds)}));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ServingCluster& group = **cluster;

  // Steps of 4096 image tokens take over a second each on 2 cores.
  v1::GenerateRequest long_request = SmallRequest("runs when the link is cut");
  long_request.set_height(1024);
  long_request.set_width(1024);
  long_request.set_num_inference_steps(200);
  std::unique_ptr<grpc::ClientContext> context =
      ContextWithDeadline(kCallSeconds);
  std::unique_ptr<grpc::ClientReader<v1::GenerateStreamResponse>> running =
      group.generation().GenerateStream(context.get(), long_request);
  v1::GenerateStreamResponse message;
  while (running->Read(&message) && !message.has_progress()) {
  }

  ASSERT_TRUE((*network)->SetLinkUp(false).ok());
  const auto cut = std::chrono::steady_clock::now();
  while (running->Read(&message)) {
  }
  const grpc::Status failed = running->Finish();
  const double detected = SecondsSince(cut);
  std::cout << "request failed " << detected
            << " s after the link was cut: " << failed.error_message()
            << std::endl;
  RecordProperty("detection_seconds", std::to_string(detected));
  EXPECT_EQ(failed.error_code(), grpc::StatusCode::UNAVAILABLE)
      << failed.error_message();
  EXPECT_THAT(failed.error_message(), ContainsRegex("ranks? [23]"));
  EXPECT_LT(detected, kDetectionSeconds);
  ASSERT_GE(SecondsUntilHealth(group, HealthStatus::NOT_SERVING, 5), 0);
  // While node B is cut off, new requests are refused, not queued.
  const absl::StatusOr<v1::GenerateResponse> refused =
      group.Generate(SmallRequest("while the link is cut"), kCallSeconds);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable)
      << refused.status();

  ASSERT_TRUE((*network)->SetLinkUp(true).ok());
  const double recovered =
      SecondsUntilHealth(group, HealthStatus::SERVING, 3 * kRecoverySeconds);
  std::cout << "SERVING " << recovered << " s after the link returned"
            << std::endl;
  RecordProperty("recovery_seconds", std::to_string(recovered));
  ASSERT_GE(recovered, 0) << group.ranks().Output(0);
  EXPECT_LT(recovered, kRecoverySeconds);
  EXPECT_GE(GroupGeneration(group), 1);
  // No rank needed restarting: every process rode out the cut.
  EXPECT_TRUE(group.ranks().Exited().empty());

  absl::StatusOr<v1::GenerateResponse> after =
      group.Generate(ParityRequest(), kCallSeconds);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_LE(MaxLatentDifference(*single, *after), kParallelLatentTolerance);
}

}  // namespace
}  // namespace ditserve::testing
