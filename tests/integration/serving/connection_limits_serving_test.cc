// The gRPC server's per-connection limits on a real host: a connection
// that never speaks is closed after the handshake timeout, calls beyond
// --max_concurrent_streams on one connection wait in the client, and a
// stream whose client stops reading is cancelled after
// --stream_write_timeout_s.

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tools/local_cluster/rank_launcher.h"
#include "tools/local_cluster/serving_cluster.h"

namespace ditserve::testing {
namespace {

using ::ditserve::local_cluster::ContextWithDeadline;
using ::ditserve::local_cluster::MetricValue;
using ::ditserve::local_cluster::ServingCluster;
using ::ditserve::local_cluster::SmallRequest;
using ::ditserve::local_cluster::StartUpFailure;
using ::testing::HasSubstr;

int PortOf(const std::string& address) {
  return std::stoi(address.substr(address.rfind(':') + 1));
}

TEST(ConnectionLimitsTest, SilentConnectionIsClosedAfterTheHandshakeTimeout) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 1, .host_flags = {"--handshake_timeout_s=1"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const int fd =
      local_cluster::ConnectToLoopback(PortOf((*cluster)->address()));
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

// A 200-step 1024² run holds the only stream of the connection (see
// serving_test.cc's LongRequest); a second call on the same channel cannot
// start, so it never reaches the host and its deadline passes in the client.
TEST(ConnectionLimitsTest, CallsBeyondTheStreamLimitWaitInTheClient) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 1, .host_flags = {"--max_concurrent_streams=1"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::GenerateRequest long_request = SmallRequest("a long one");
  long_request.set_height(1024);
  long_request.set_width(1024);
  long_request.set_num_inference_steps(200);
  auto running_context = ContextWithDeadline(120);
  auto running = (*cluster)->generation().GenerateStream(running_context.get(),
                                                         long_request);
  v1::GenerateStreamResponse message;
  while (running->Read(&message) && !message.has_progress()) {
  }

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
  running_context->TryCancel();
  while (running->Read(&message)) {
  }
}

// A client that stops reading a stream: nothing but the host's write
// timeout ends the call, which otherwise keeps the run's outputs queued on
// the host until the client's deadline, and for ever without one. The client
// reads only once the host says it cancelled: a Read asks for a message and
// opens the stream's window, and the stalled write would go through.
TEST(ConnectionLimitsTest, StreamWhoseClientStopsReadingIsCancelled) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 1, .host_flags = {"--stream_write_timeout_s=2"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  // Without BDP probing the stream's window stays at gRPC's 64 KiB, so the
  // host cannot send a 3 MiB image (1024² RGB8) to a client that does not
  // read, however large the loopback socket's buffers.
  grpc::ChannelArguments arguments;
  arguments.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  std::unique_ptr<v1::Generation::Stub> generation = v1::Generation::NewStub(
      grpc::CreateCustomChannel((*cluster)->address(),
                                grpc::InsecureChannelCredentials(), arguments));
  v1::GenerateRequest request = SmallRequest("never read");
  request.set_height(1024);
  request.set_width(1024);
  request.set_output_format(v1::OUTPUT_FORMAT_RGB8);
  grpc::ClientContext context;
  auto stream = generation->GenerateStream(&context, request);
  EXPECT_TRUE((*cluster)->ranks().WaitForOutput(
      0, "GenerateStream cancelled: its client took no message",
      std::chrono::seconds(90)))
      << (*cluster)->ranks().Output(0);

  v1::GenerateStreamResponse message;
  bool got_result = false;
  while (stream->Read(&message)) {
    got_result = got_result || message.has_result();
  }
  const grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED)
      << status.error_message();
  EXPECT_FALSE(got_result) << "the host kept the outputs for the client";
}

TEST(ConnectionLimitsTest, BadLimitFailsStartUpNamingTheFlag) {
  EXPECT_THAT(StartUpFailure({.world_size = 1,
                              .host_flags = {"--max_concurrent_streams=0"}}),
              HasSubstr("--max_concurrent_streams 0: allowed 1 or more"));
}

TEST(ConnectionLimitsTest, BadStreamWriteTimeoutFailsStartUpNamingTheFlag) {
  EXPECT_THAT(StartUpFailure({.world_size = 1,
                              .host_flags = {"--stream_write_timeout_s=0"}}),
              HasSubstr("--stream_write_timeout_s 0: allowed above 0"));
}

}  // namespace
}  // namespace ditserve::testing
