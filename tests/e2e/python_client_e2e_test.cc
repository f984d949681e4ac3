// End to end with the Python client (clients/python) on Debian's
// python3-grpcio: python_client.py and python_client_tls.py call a real
// serving group through the `ditserve` package and print what they got as
// JSON, checked here. python_client_keepalive.py calls through a relay that
// the test stalls.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/local_cluster/serving_cluster.h"
#include "tools/local_cluster/shell_command.h"
#include "tools/local_cluster/stallable_proxy.h"
#include "tools/local_cluster/test_certificates.h"

namespace ditserve::testing {
namespace {

using ::ditserve::local_cluster::ServingCluster;
using ::ditserve::local_cluster::StallableProxy;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

void ExpectSmallPng(const nlohmann::json& image) {
  EXPECT_EQ(image["png_signature"], "89504e470d0a1a0a");
  EXPECT_EQ(image["width"], 48);
  EXPECT_EQ(image["height"], 64);
}

TEST(PythonClientE2eTest, GeneratesStreamsAndReportsErrorsThroughThePackage) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 1});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::string out_dir = ::testing::TempDir() + "/python-client";
  std::filesystem::create_directories(out_dir);
  // The script's stderr goes to the test's own, so stdout is only the JSON.
  absl::StatusOr<std::string> output = local_cluster::ShellOutput(absl::StrCat(
      "PYTHONPATH=", DITSERVE_PYTHONPATH, " PYTHONDONTWRITEBYTECODE=1 ",
      "timeout 240 ", DITSERVE_PYTHON3, " ", DITSERVE_E2E_DIR,
      "/python_client.py ", (*cluster)->address(), " ", out_dir));
  ASSERT_TRUE(output.ok()) << output.status();
  const nlohmann::json summary =
      nlohmann::json::parse(*output, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(summary.is_discarded()) << *output;

  EXPECT_EQ(summary["health"], "SERVING");
  EXPECT_EQ(summary["generation_health"], "SERVING");
  EXPECT_EQ(summary["model"], "flux-dev");

  ASSERT_EQ(summary["generate"].size(), 1U);
  ExpectSmallPng(summary["generate"][0]);
  const std::string saved = out_dir + "/lighthouse.png";
  EXPECT_THAT(summary["saved"].get<std::vector<std::string>>(),
              ElementsAre(saved));
  EXPECT_THAT(ReadFile(saved), StartsWith("\x89PNG\r\n\x1a\n"));

  // One progress callback per denoising step, in order.
  EXPECT_EQ(summary["progress"], nlohmann::json::parse("[[1, 2], [2, 2]]"));
  ASSERT_EQ(summary["stream"].size(), 1U);
  ExpectSmallPng(summary["stream"][0]);
  EXPECT_EQ(summary["stream_equals_generate"], true);

  // 640 x 576 RGB8 came in 1 MiB chunks and was put back together.
  EXPECT_EQ(summary["chunked_bytes"], nlohmann::json::parse("[1105920]"));
  EXPECT_EQ(summary["chunked_equals_generate"], true);

  // partial_images 1 of 2 steps: one preview after step 1, as large as the
  // image, joined from its slices; the image itself is unchanged by it.
  EXPECT_EQ(summary["previews"],
            nlohmann::json::parse(R"([{"index": 0, "step": 1, "bytes": 1105920,
                                       "width": 576, "height": 640}])"));
  EXPECT_EQ(summary["preview_is_not_the_image"], true);
  EXPECT_EQ(summary["previewed_equals_chunked"], true);
  EXPECT_EQ(summary["unstreamed_previews"]["code"], "INVALID_ARGUMENT");
  EXPECT_EQ(summary["unstreamed_previews"]["fields"],
            nlohmann::json::array({"partial_images"}));
  EXPECT_THAT(summary["unstreamed_previews"]["message"].get<std::string>(),
              HasSubstr("needs GenerateStream"));

  // validate() returns the frozen config; generate() refuses validate_only,
  // which would return no outputs.
  EXPECT_EQ(summary["validated"],
            nlohmann::json::parse(R"({"height": 64, "width": 48, "steps": 2,
                                      "seeds": [3], "previews": [1]})"));
  EXPECT_EQ(summary["validate_only_in_generate"]["code"], "ValueError");
  EXPECT_THAT(
      summary["validate_only_in_generate"]["message"].get<std::string>(),
      StartsWith("validate_only: generate and stream return outputs"));

  EXPECT_EQ(summary["bad_height"]["code"], "INVALID_ARGUMENT");
  EXPECT_THAT(summary["bad_height"]["message"].get<std::string>(),
              HasSubstr("height"));
  // From the google.rpc.BadRequest in the status details.
  EXPECT_EQ(summary["bad_height"]["fields"], nlohmann::json::array({"height"}));
  EXPECT_EQ(summary["unknown_field"]["code"], "ValueError");
  EXPECT_THAT(summary["unknown_field"]["message"].get<std::string>(),
              StartsWith("heigth: GenerateRequest has no such field"));
}

// What python_client_keepalive.py printed, calling through a relay stalled
// `stall_after` once the run had started, and how long after the stall the
// script ended (`timeout script_timeout_s` ends one that never finds out).
struct StalledCall {
  absl::StatusOr<std::string> output;
  double seconds_after_stall = 0;
};

StalledCall CallThroughARelayStalledAfter(ServingCluster& cluster,
                                          std::chrono::seconds stall_after,
                                          int script_timeout_s) {
  absl::StatusOr<std::unique_ptr<StallableProxy>> proxy =
      StallableProxy::Start(cluster.grpc_port());
  if (!proxy.ok()) return {.output = proxy.status()};
  StalledCall call;
  std::thread script([&] {
    call.output = local_cluster::ShellOutput(absl::StrCat(
        "PYTHONPATH=", DITSERVE_PYTHONPATH, " PYTHONDONTWRITEBYTECODE=1 ",
        "timeout ", script_timeout_s, " ", DITSERVE_PYTHON3, " ",
        DITSERVE_E2E_DIR,
        "/python_client_keepalive.py 127.0.0.1:", (*proxy)->port()));
  });
  EXPECT_TRUE(cluster.ranks().WaitForOutput(0, "run started",
                                            std::chrono::seconds(60)));
  std::this_thread::sleep_for(stall_after);
  (*proxy)->Stall();
  const auto stalled = std::chrono::steady_clock::now();
  script.join();
  call.seconds_after_stall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stalled)
          .count();
  return call;
}

// The gRPC code python_client_keepalive.py printed; "" when it printed no
// outcome.
std::string OutcomeCode(const StalledCall& call) {
  if (!call.output.ok()) return "";
  const nlohmann::json outcome =
      nlohmann::json::parse(*call.output, nullptr, /*allow_exceptions=*/false);
  if (outcome.is_discarded() || !outcome.contains("code")) return "";
  return outcome["code"];
}

std::string Describe(const StalledCall& call) {
  return call.output.ok() ? *call.output : call.output.status().ToString();
}

// A call without a timeout to a host that goes silent in the middle of the
// run, as one whose machine died or whose network went dark: the client's
// keepalive pings find out, and the call fails instead of waiting for ever
// (or, should the pings not work, until `timeout 90` ends the script). It
// fails about 10 s after the last frame the client read from the host, a
// second or so before the stall: the pings, not something else, found the
// silence. The host's own keepalive
// cancels the run, so the group stops quickly; its timeout leaves a loaded
// machine time to answer before the stall.
TEST(PythonClientE2eTest, KeepaliveEndsACallToAHostThatWentSilent) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 1,
           .host_flags = {"--keepalive_time_s=1", "--keepalive_timeout_s=5"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const StalledCall call = CallThroughARelayStalledAfter(
      **cluster, std::chrono::seconds(0), /*script_timeout_s=*/90);

  EXPECT_EQ(OutcomeCode(call), "UNAVAILABLE") << Describe(call);
  EXPECT_GE(call.seconds_after_stall, 8.0) << Describe(call);
  EXPECT_LT(call.seconds_after_stall, 60.0) << Describe(call);
}

// The host goes silent only after the client's pings have had the call to
// themselves for 25 s: the host sends nothing while it runs (its own pings
// are a minute apart), and the client, which sends nothing either, has
// pinged at about 10 and 20 s. gRPC 1.51 pings at most twice while a client
// sends no data unless max_pings_without_data is 0, as the package sets it;
// without that the third ping, the one that would find the silence, never
// goes, and the call waits until `timeout 75` ends the script.
TEST(PythonClientE2eTest, KeepalivePingsGoOnThroughALongSilentCall) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 1});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const StalledCall call = CallThroughARelayStalledAfter(
      **cluster, std::chrono::seconds(25), /*script_timeout_s=*/75);

  EXPECT_EQ(OutcomeCode(call), "UNAVAILABLE") << Describe(call);
  // The next ping is due at most 10 s after the stall, and answered within 1.
  EXPECT_LT(call.seconds_after_stall, 25.0) << Describe(call);
}

// The package against a host that requires mutual TLS and a bearer token:
// the right credentials are served, every other client is refused, and a
// progress callback that raises cancels the run on the host.
TEST(PythonClientE2eTest, MutualTlsTokenAndCancelAgainstARealHost) {
  absl::StatusOr<local_cluster::TestCertificates> certs =
      local_cluster::MakeTestCertificates(::testing::TempDir() +
                                          "/python-client-tls");
  ASSERT_TRUE(certs.ok()) << certs.status();
  const std::string token = "python-client-token-0123";
  const std::string tokens = certs->dir + "/tokens";
  std::ofstream(tokens) << token << "\n";
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 1,
           .host_flags = {"--tls_cert=" + certs->server_cert(),
                          "--tls_key=" + certs->server_key(),
                          "--tls_client_ca=" + certs->ca(),
                          "--auth_token_file=" + tokens},
           .credentials = grpc::SslCredentials(
               {ReadFile(certs->ca()), ReadFile(certs->client_key()),
                ReadFile(certs->client_cert())})});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  absl::StatusOr<std::string> output = local_cluster::ShellOutput(absl::StrCat(
      "PYTHONPATH=", DITSERVE_PYTHONPATH, " PYTHONDONTWRITEBYTECODE=1 ",
      "timeout 240 ", DITSERVE_PYTHON3, " ", DITSERVE_E2E_DIR,
      "/python_client_tls.py ", (*cluster)->address(), " ", certs->ca(), " ",
      certs->client_cert(), " ", certs->client_key(), " ", token));
  ASSERT_TRUE(output.ok()) << output.status();
  const nlohmann::json summary =
      nlohmann::json::parse(*output, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(summary.is_discarded()) << *output;

  EXPECT_EQ(summary["model"]["result"], "flux-dev");
  EXPECT_EQ(summary["health"]["result"], "SERVING");
  EXPECT_EQ(summary["png_signature"], "89504e470d0a1a0a");
  EXPECT_EQ(summary["stream_stopped"], true);
  EXPECT_EQ(summary["wrong_token"]["code"], "UNAUTHENTICATED");
  EXPECT_EQ(summary["no_token"]["code"], "UNAUTHENTICATED");
  EXPECT_EQ(summary["plaintext"]["code"], "UNAVAILABLE");
  EXPECT_EQ(summary["no_client_certificate"]["code"], "UNAVAILABLE");

  // The 200-step run ended long before it could finish: cancelled.
  double cancelled = 0;
  for (int attempt = 0; attempt < 100 && cancelled < 1; ++attempt) {
    absl::StatusOr<std::string> metrics = (*cluster)->ScrapeMetrics();
    ASSERT_TRUE(metrics.ok()) << metrics.status();
    cancelled = local_cluster::MetricValue(*metrics, "ditserve_requests_total",
                                           {"status=\"cancelled\""});
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(cancelled, 1);
}

}  // namespace
}  // namespace ditserve::testing
