// Per-connection limits on a real host: a connection that never speaks is
// closed after the handshake timeout, calls beyond
// --max_concurrent_streams on one connection wait in the client, a stream
// whose client stops reading is cancelled after --stream_write_timeout_s, a
// stream that breaks after its run is counted as undelivered (and one that
// stalls during its run as cancelled only), the run of a client that went
// silent is cancelled after --keepalive_time_s and --keepalive_timeout_s, a
// client's own pings are taken, ditctl's end its call to a host that went
// silent, and the HTTP API's connections get TCP keepalive, which cancels the
// run of a client whose network went dark.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tools/local_cluster/rank_launcher.h"
#include "tools/local_cluster/running_stream.h"
#include "tools/local_cluster/serving_cluster.h"
#include "tools/local_cluster/shell_command.h"
#include "tools/local_cluster/stallable_proxy.h"
#include "tools/local_cluster/two_node_network.h"

namespace ditserve::testing {
namespace {

using ::ditserve::local_cluster::ContextWithDeadline;
using ::ditserve::local_cluster::LongRequest;
using ::ditserve::local_cluster::MetricValue;
using ::ditserve::local_cluster::RunningStream;
using ::ditserve::local_cluster::ServingCluster;
using ::ditserve::local_cluster::SmallRequest;
using ::ditserve::local_cluster::StallableProxy;
using ::ditserve::local_cluster::StartAndWaitForFirstStep;
using ::ditserve::local_cluster::StartUpFailure;
using ::testing::HasSubstr;

// /proc/net/tcp's "tr" column: which kernel timer runs on a socket.
constexpr int kKeepaliveTimer = 2;

struct TcpTimer {
  int kind = 0;
  double seconds = 0;
};

// The timer running on the host's end of the loopback connection from
// `client_port` to `server_port`, as /proc/net/tcp or tcp6 lists it (for a
// server listening on IPv6 too); nullopt when that connection is not listed.
std::optional<TcpTimer> HostEndTimer(int server_port, int client_port) {
  const auto port_of = [](const std::string& address) {
    return std::stoi(address.substr(address.rfind(':') + 1), nullptr, 16);
  };
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream file(table);
    std::string line;
    std::getline(file, line);
    while (std::getline(file, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer;
      fields >> slot >> local >> remote >> state >> queues >> timer;
      if (state != "01" || port_of(local) != server_port ||
          port_of(remote) != client_port) {
        continue;
      }
      const std::vector<std::string> parts = absl::StrSplit(timer, ':');
      const double ticks = std::stoll(parts[1], nullptr, 16);
      return TcpTimer{.kind = std::stoi(parts[0], nullptr, 16),
                      .seconds = ticks / ::sysconf(_SC_CLK_TCK)};
    }
  }
  return std::nullopt;
}

TEST(ConnectionLimitsTest, SilentConnectionIsClosedAfterTheHandshakeTimeout) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 1, .host_flags = {"--handshake_timeout_s=1"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const int fd = local_cluster::ConnectToLoopback((*cluster)->grpc_port());
  // Without the limit gRPC waits 120 s; the read gives up after 20.
  timeval timeout{.tv_sec = 20, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  char byte;
  ssize_t got;
  do {
    got = ::recv(fd, &byte, 1, 0);
  } while (got > 0);
  EXPECT_EQ(got, 0) << "the host should close the silent connection";
  ::close(fd);
}

// A LongRequest holds the only stream of the connection; a second call on the
// same channel cannot start, so it never reaches the host and its deadline
// passes in the client.
TEST(ConnectionLimitsTest, CallsBeyondTheStreamLimitWaitInTheClient) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 1, .host_flags = {"--max_concurrent_streams=1"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  RunningStream running =
      StartAndWaitForFirstStep(**cluster, LongRequest(), /*seconds=*/120);

  v1::GenerateResponse response;
  auto waiting_context = ContextWithDeadline(3);
  const grpc::Status waiting = (*cluster)->generation().Generate(
      waiting_context.get(), SmallRequest("second"), &response);
  EXPECT_EQ(waiting.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
      << waiting.error_message();
  absl::StatusOr<std::string> metrics = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(MetricValue(*metrics, "ditserve_requests_total", {}), 0)
      << "the second call never reached the host";
  running.CancelAndDrain();
}

// A request whose image, or each preview, is 3 MiB (1024² RGB8).
v1::GenerateRequest AtThreeMegabytes(v1::GenerateRequest request) {
  request.set_height(1024);
  request.set_width(1024);
  request.set_output_format(v1::OUTPUT_FORMAT_RGB8);
  return request;
}

// A GenerateStream of 3 MiB images (AtThreeMegabytes) on a channel without
// BDP probing, whose window stays at gRPC's 64 KiB: the host cannot send an
// image to a client that does not read, however large the loopback socket's
// buffers.
class UnreadStream {
 public:
  UnreadStream(const ServingCluster& cluster,
               const v1::GenerateRequest& request) {
    grpc::ChannelArguments arguments;
    arguments.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    generation_ = v1::Generation::NewStub(grpc::CreateCustomChannel(
        cluster.address(), grpc::InsecureChannelCredentials(), arguments));
    stream_ = generation_->GenerateStream(&context_, AtThreeMegabytes(request));
  }

  void Leave() { context_.TryCancel(); }

  // Reads what is left; whether the result came, and the call's status.
  std::pair<bool, grpc::Status> ReadToTheEnd() {
    v1::GenerateStreamResponse message;
    bool got_result = false;
    while (stream_->Read(&message)) {
      got_result = got_result || message.has_result();
    }
    return {got_result, stream_->Finish()};
  }

 private:
  std::unique_ptr<v1::Generation::Stub> generation_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1::GenerateStreamResponse>> stream_;
};

// Polls `metric`'s series with `label` until it reads 1 (true) or 90 s have
// passed: the host counts as a run's answer is decided or a broken write
// comes back, without a log line to wait for.
bool WaitForMetric(const ServingCluster& cluster, const std::string& metric,
                   const std::string& label) {
  for (int poll = 0; poll < 900; ++poll) {
    if (poll > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const absl::StatusOr<std::string> metrics = cluster.ScrapeMetrics();
    if (metrics.ok() && MetricValue(*metrics, metric, {label}) == 1) {
      return true;
    }
  }
  return false;
}

// A client that stops reading a stream: nothing but the host's write
// timeout ends the call, which otherwise keeps the run's outputs queued on
// the host until the client's deadline, and for ever without one. The client
// reads only once the host says it cancelled: a Read asks for a message and
// opens the stream's window, and the stalled write would go through. The
// run was counted ok when it ended; the cut stream is counted as well.
TEST(ConnectionLimitsTest, StreamWhoseClientStopsReadingIsCancelled) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 1, .host_flags = {"--stream_write_timeout_s=2"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  UnreadStream unread(**cluster, SmallRequest("never read"));
  EXPECT_TRUE((*cluster)->ranks().WaitForOutput(
      0, "GenerateStream cancelled: its client took no message",
      std::chrono::seconds(90)))
      << (*cluster)->ranks().Output(0);

  const auto [got_result, status] = unread.ReadToTheEnd();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED)
      << status.error_message();
  EXPECT_FALSE(got_result) << "the host kept the outputs for the client";
  EXPECT_TRUE(WaitForMetric(**cluster, "ditserve_undelivered_streams_total",
                            "reason=\"write_timeout\""));
  const absl::StatusOr<std::string> metrics = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(MetricValue(*metrics, "ditserve_undelivered_streams_total",
                        {"reason=\"client_gone\""}),
            0);
}

// A client that leaves once its run has ended, its image still queued on
// the host: the run is counted ok, and the stream as one whose outputs did
// not arrive.
TEST(ConnectionLimitsTest, StreamWhoseClientLeavesAfterTheRunIsUndelivered) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 1});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  UnreadStream unread(**cluster, SmallRequest("left behind"));
  // Counted once the run's answer is decided, just before the host sends it.
  EXPECT_TRUE(
      WaitForMetric(**cluster, "ditserve_requests_total", "status=\"ok\""));
  unread.Leave();

  EXPECT_EQ(unread.ReadToTheEnd().second.error_code(),
            grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(WaitForMetric(**cluster, "ditserve_undelivered_streams_total",
                            "reason=\"client_gone\""));
  const absl::StatusOr<std::string> metrics = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(MetricValue(*metrics, "ditserve_requests_total", {"status=\"ok\""}),
            1);
  EXPECT_EQ(MetricValue(*metrics, "ditserve_undelivered_streams_total",
                        {"reason=\"write_timeout\""}),
            0);
}

// A client that stops reading while its run goes on: the first preview's
// write stalls, the host cancels the call, and the run stops at its next
// step. The run is counted cancelled, and not as an undelivered stream, which
// is a run counted ok whose outputs did not arrive.
TEST(ConnectionLimitsTest, StreamThatStallsDuringItsRunIsCountedCancelled) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 1, .host_flags = {"--stream_write_timeout_s=2"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  // The first of 3 previews comes after 10 of the 40 steps, about 0.5 s
  // each at 1024² here.
  v1::GenerateRequest request = LongRequest();
  request.set_num_inference_steps(40);
  request.set_partial_images(3);
  UnreadStream unread(**cluster, request);
  EXPECT_TRUE(WaitForMetric(**cluster, "ditserve_requests_total",
                            "status=\"cancelled\""))
      << (*cluster)->ranks().Output(0);

  const grpc::Status status = unread.ReadToTheEnd().second;
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED)
      << status.error_message();
  const absl::StatusOr<std::string> metrics = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(MetricValue(*metrics, "ditserve_undelivered_streams_total", {}), 0);
}

// A client that goes silent in the middle of a Generate call, as one whose
// machine froze or whose network went dark: the call sends nothing while
// its run lasts, and only the host's keepalive pings find out. While the
// client still answers them the run goes on; once it is silent the run
// stops within the ping interval and timeout (1 s and 2 s, which leaves a
// loaded machine time to answer) and a step, where gRPC's default timeout
// alone is 20 s.
TEST(ConnectionLimitsTest, RunOfAClientThatWentSilentIsCancelled) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 1,
           .host_flags = {"--keepalive_time_s=1", "--keepalive_timeout_s=2"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  absl::StatusOr<std::unique_ptr<StallableProxy>> proxy =
      StallableProxy::Start((*cluster)->grpc_port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  std::unique_ptr<v1::Generation::Stub> generation = v1::Generation::NewStub(
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", (*proxy)->port()),
                          grpc::InsecureChannelCredentials()));
  grpc::Status client_status;
  std::thread client([&] {
    v1::GenerateResponse response;
    client_status = generation->Generate(ContextWithDeadline(120).get(),
                                         LongRequest(), &response);
  });
  EXPECT_TRUE((*cluster)->ranks().WaitForOutput(0, "run started",
                                                std::chrono::seconds(60)));
  EXPECT_FALSE((*cluster)->ranks().WaitForOutput(
      0, "finished status=", std::chrono::seconds(3)))
      << "the host cut off a client that answers its pings";
  (*proxy)->Stall();
  // Well within the client's 120 s deadline, where gRPC's default would
  // wait 2 h before its first ping; a loaded machine's steps take long.
  EXPECT_TRUE((*cluster)->ranks().WaitForOutput(0, "finished status=cancelled",
                                                std::chrono::seconds(40)))
      << (*cluster)->ranks().Output(0);
  // Logged just before the run is counted.
  EXPECT_TRUE(WaitForMetric(**cluster, "ditserve_requests_total",
                            "status=\"cancelled\""));

  // The client learns only when its own connection ends.
  proxy->reset();
  client.join();
  EXPECT_EQ(client_status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << client_status.error_message();
}

// A client that pings every 6 s while its Generate call waits for the run,
// as clients are told they may (every 10 s, README): the host, which sends
// nothing meanwhile and pings only after a minute, takes them, where gRPC's
// default would close the connection at the third ping (too_many_pings),
// and the run would stop cancelled.
TEST(ConnectionLimitsTest, ClientKeepalivePingsDuringARunAreTaken) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 1});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  grpc::ChannelArguments arguments;
  arguments.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 6000);
  arguments.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  std::unique_ptr<v1::Generation::Stub> generation = v1::Generation::NewStub(
      grpc::CreateCustomChannel((*cluster)->address(),
                                grpc::InsecureChannelCredentials(), arguments));
  grpc::ClientContext context;
  grpc::Status client_status;
  std::thread client([&] {
    v1::GenerateResponse response;
    client_status = generation->Generate(&context, LongRequest(), &response);
  });
  EXPECT_TRUE((*cluster)->ranks().WaitForOutput(0, "run started",
                                                std::chrono::seconds(60)));
  // Pings at about 6, 12, 18 and 24 s: three strikes by 30.
  EXPECT_FALSE((*cluster)->ranks().WaitForOutput(
      0, "finished status=", std::chrono::seconds(30)))
      << "the host closed a connection for its client's pings";

  context.TryCancel();
  client.join();
  EXPECT_EQ(client_status.error_code(), grpc::StatusCode::CANCELLED)
      << client_status.error_message();
}

// How ditctl ended, run through a relay with 10 s keepalive pings answered
// within 1 s, `--timeout=timeout_s` and `generate_arguments`; the relay stalls
// once `until_stall` returns.
struct StalledDitctl {
  local_cluster::ShellResult result;
  double seconds_after_stall = 0;
};

StalledDitctl RunDitctlThroughAStalledRelay(
    const ServingCluster& cluster, int timeout_s,
    const std::string& generate_arguments,
    absl::FunctionRef<void()> until_stall) {
  absl::StatusOr<std::unique_ptr<StallableProxy>> proxy =
      StallableProxy::Start(cluster.grpc_port());
  if (!proxy.ok()) {
    return {.result = {.exit_code = -1, .output = proxy.status().ToString()}};
  }
  StalledDitctl ditctl;
  std::thread process([&] {
    ditctl.result = local_cluster::RunShell(absl::StrCat(
        DITSERVE_BIN_DIR, "/ditctl --server=127.0.0.1:", (*proxy)->port(),
        " --keepalive=10 --keepalive_timeout=1 --timeout=", timeout_s,
        " generate ", generate_arguments, " -o ", ::testing::TempDir(),
        "/never_written.png 2>&1"));
  });
  until_stall();
  (*proxy)->Stall();
  const auto stalled = std::chrono::steady_clock::now();
  process.join();
  ditctl.seconds_after_stall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stalled)
          .count();
  return ditctl;
}

// ditctl's own keepalive against a host that goes silent in the middle of
// a run: the stream's progress stops, and ditctl's pings find out well
// before --timeout, about 10 s after the last frame it read. The host's
// keepalive cancels the run, so the group stops quickly.
TEST(ConnectionLimitsTest, DitctlKeepaliveEndsACallToAHostThatWentSilent) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 1,
           .host_flags = {"--keepalive_time_s=1", "--keepalive_timeout_s=5"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const StalledDitctl ditctl = RunDitctlThroughAStalledRelay(
      **cluster, /*timeout_s=*/120, "'a long one' -W 1024 -H 1024 --steps 200",
      [&] {
        EXPECT_TRUE((*cluster)->ranks().WaitForOutput(
            0, "run started", std::chrono::seconds(60)));
      });

  EXPECT_NE(ditctl.result.exit_code, 0) << ditctl.result.output;
  EXPECT_THAT(ditctl.result.output, HasSubstr("UNAVAILABLE"));
  EXPECT_GE(ditctl.seconds_after_stall, 8.0) << ditctl.result.output;
  EXPECT_LT(ditctl.seconds_after_stall, 60.0) << ditctl.result.output;
}

// ditctl's pings while its call waits in the queue, where the host sends
// it nothing at all: by the stall, 25 s in, ditctl has pinged twice (about
// 10 and 20 s) without sending anything. gRPC 1.51 pings no more than that
// unless max_pings_without_data is 0, as ditctl sets it; without that the
// ping that would find the silence never goes, and only --timeout ends the
// call.
TEST(ConnectionLimitsTest, DitctlKeepaliveGoesOnWhileItsCallWaitsQueued) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 1});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  RunningStream running =
      StartAndWaitForFirstStep(**cluster, LongRequest(), /*seconds=*/120);
  const StalledDitctl ditctl = RunDitctlThroughAStalledRelay(
      **cluster, /*timeout_s=*/75, "'waits its turn' --steps 2", [&] {
        std::this_thread::sleep_for(std::chrono::seconds(25));
        absl::StatusOr<std::string> metrics = (*cluster)->ScrapeMetrics();
        ASSERT_TRUE(metrics.ok()) << metrics.status();
        EXPECT_EQ(MetricValue(*metrics, "ditserve_queue_depth", {}), 1)
            << "ditctl's call is not waiting in the queue";
      });

  EXPECT_NE(ditctl.result.exit_code, 0) << ditctl.result.output;
  EXPECT_THAT(ditctl.result.output, HasSubstr("UNAVAILABLE"));
  // The next ping is due at most 10 s after the stall, and answered within 1.
  EXPECT_LT(ditctl.seconds_after_stall, 25.0) << ditctl.result.output;
  running.CancelAndDrain();
}

// The HTTP API's connections get TCP keepalive from --keepalive_time_s: the
// kernel's timer on the host's end of an idle connection is the keepalive
// one, due in 7 s rather than the default flag's 60 (or none at all).
TEST(ConnectionLimitsTest, HttpConnectionsGetTheKeepaliveFlag) {
  constexpr int kKeepaliveSeconds = 7;
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 1,
                             .host_flags = {absl::StrCat("--keepalive_time_s=",
                                                         kKeepaliveSeconds)}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const int fd = local_cluster::ConnectToLoopback((*cluster)->http_port());
  ASSERT_GE(fd, 0);
  sockaddr_in client{};
  socklen_t length = sizeof(client);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&client), &length),
            0);
  const std::optional<TcpTimer> timer =
      HostEndTimer((*cluster)->http_port(), ntohs(client.sin_port));
  ::close(fd);
  ASSERT_TRUE(timer.has_value()) << "no such connection in /proc/net/tcp*";
  EXPECT_EQ(timer->kind, kKeepaliveTimer);
  EXPECT_GT(timer->seconds, kKeepaliveSeconds - 2);
  EXPECT_LE(timer->seconds, kKeepaliveSeconds);
}

// An HTTP client whose network goes dark in the middle of its request, as
// one whose cable was pulled: the host sends nothing while the run lasts, so
// only its TCP keepalive (probes after 1 s of silence, 3 s to answer them)
// finds out, and the handler, which watches its connection, cancels the run.
// The client is on a second network namespace (node B), so that taking the
// link down leaves the host's probes unanswered; over loopback the kernel
// answers them whatever the client does.
TEST(ConnectionLimitsTest, HttpRunOfAClientWhoseNetworkWentDarkIsCancelled) {
  absl::StatusOr<std::unique_ptr<local_cluster::TwoNodeNetwork>> network =
      local_cluster::TwoNodeNetwork::Create();
  if (absl::IsFailedPrecondition(network.status())) {
    GTEST_SKIP() << network.status();
  }
  ASSERT_TRUE(network.ok()) << network.status();
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 1,
           .host_flags = {"--keepalive_time_s=1", "--keepalive_timeout_s=3",
                          "--listen=0.0.0.0"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  // SmallRequest's model at 1024², 200 steps: minutes of work.
  const std::string long_body =
      R"({"model":"flux-dev","prompt":"a long one","size":"1024x1024",)"
      R"("num_inference_steps":200,"max_sequence_length":32})";
  local_cluster::ShellResult client_result;
  std::thread client([&] {
    client_result = (*network)->RunOnNodeB(absl::StrCat(
        "curl -sS --max-time 120 -H 'Content-Type: application/json' -d '",
        long_body, "' http://", (*network)->address_a(), ":",
        (*cluster)->http_port(), "/v1/images/generations 2>&1"));
  });
  EXPECT_TRUE((*cluster)->ranks().WaitForOutput(0, "run started",
                                                std::chrono::seconds(60)))
      << (*cluster)->ranks().Output(0);
  EXPECT_FALSE((*cluster)->ranks().WaitForOutput(
      0, "finished status=", std::chrono::seconds(4)))
      << "the host cut off a client whose network answers its probes";
  EXPECT_TRUE((*network)->SetLinkUp(false).ok());
  // Probing starts after a second and gives up 3 s later; a loaded
  // machine's steps take long.
  EXPECT_TRUE((*cluster)->ranks().WaitForOutput(0, "finished status=cancelled",
                                                std::chrono::seconds(40)))
      << (*cluster)->ranks().Output(0);
  EXPECT_TRUE(WaitForMetric(**cluster, "ditserve_requests_total",
                            "status=\"cancelled\""));
  (*network)->KillNodeBProcesses();
  client.join();
  EXPECT_NE(client_result.exit_code, 0) << client_result.output;
}

TEST(ConnectionLimitsTest, BadLimitFailsStartUpNamingTheFlag) {
  EXPECT_THAT(StartUpFailure({.world_size = 1,
                              .host_flags = {"--max_concurrent_streams=0"}}),
              HasSubstr("--max_concurrent_streams 0: allowed 1 or more"));
}

TEST(ConnectionLimitsTest, BadStreamWriteTimeoutFailsStartUpNamingTheFlag) {
  EXPECT_THAT(StartUpFailure({.world_size = 1,
                              .host_flags = {"--stream_write_timeout_s=0"}}),
              HasSubstr("--stream_write_timeout_s 0: allowed from 0.001"));
}

TEST(ConnectionLimitsTest, BadKeepaliveFailsStartUpNamingTheFlag) {
  EXPECT_THAT(StartUpFailure({.world_size = 1,
                              .host_flags = {"--keepalive_time_s=0.0001"}}),
              HasSubstr("--keepalive_time_s 0.0001: allowed from 0.001"));
  EXPECT_THAT(StartUpFailure({.world_size = 1,
                              .host_flags = {"--keepalive_timeout_s=-1"}}),
              HasSubstr("--keepalive_timeout_s -1: allowed from 0.001"));
}

}  // namespace
}  // namespace ditserve::testing
