// Bytes that are not a valid request get INVALID_ARGUMENT naming what failed
// (gRPC's generated handlers answer UNIMPLEMENTED with no message), are
// counted, and leave the host serving.

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tools/local_cluster/serving_cluster.h"

namespace ditserve {
namespace {

using ::ditserve::local_cluster::ContextWithDeadline;
using ::ditserve::local_cluster::MetricValue;
using ::ditserve::local_cluster::ServingCluster;
using ::ditserve::local_cluster::SmallRequest;
using ::testing::HasSubstr;

class MalformedRequestTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
        ServingCluster::Start({.world_size = 1});
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = cluster->release();
  }
  static void TearDownTestSuite() { delete cluster_; }

  // One unary call of `method` carrying exactly `bytes`.
  static grpc::Status CallWithBytes(const std::string& method,
                                    const std::string& bytes) {
    grpc::GenericStub stub(grpc::CreateChannel(
        cluster_->address(), grpc::InsecureChannelCredentials()));
    grpc::Slice slice(bytes);
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    auto context = ContextWithDeadline(30);
    std::promise<grpc::Status> done;
    stub.UnaryCall(context.get(), method, grpc::StubOptions(), &request,
                   &response,
                   [&done](grpc::Status status) { done.set_value(status); });
    return done.get_future().get();
  }

  static double InvalidArgumentCount() {
    absl::StatusOr<std::string> metrics = cluster_->ScrapeMetrics();
    EXPECT_TRUE(metrics.ok()) << metrics.status();
    return metrics.ok() ? MetricValue(*metrics, "ditserve_requests_total",
                                      {"status=\"invalid_argument\""})
                        : -1;
  }

  static ServingCluster* cluster_;
};

ServingCluster* MalformedRequestTest::cluster_ = nullptr;

constexpr char kGenerate[] = "/ditserve.v1.Generation/Generate";

TEST_F(MalformedRequestTest, GarbageGenerateRequestIsInvalidArgument) {
  const double before = InvalidArgumentCount();
  const grpc::Status status =
      CallWithBytes(kGenerate, "\xff\xff\xff\xff not a message");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("not a valid GenerateRequest: its bytes are not a "
                        "protobuf encoding"));
  EXPECT_EQ(InvalidArgumentCount() - before, 1);
}

TEST_F(MalformedRequestTest, TruncatedGenerateRequestIsInvalidArgument) {
  const std::string bytes =
      SmallRequest("a fox in the snow").SerializeAsString();
  const grpc::Status status =
      CallWithBytes(kGenerate, bytes.substr(0, bytes.size() - 3));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("truncated or corrupt"));
}

TEST_F(MalformedRequestTest, GarbageGetServerInfoRequestIsInvalidArgument) {
  const grpc::Status status = CallWithBytes(
      "/ditserve.v1.Generation/GetServerInfo", "\x0b\x0b\x0b garbage");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("not a valid GetServerInfoRequest"));
}

TEST_F(MalformedRequestTest, InvalidUtf8PromptOnTheStreamNamesTheField) {
  v1::GenerateRequest request = SmallRequest("a valid first prompt");
  request.add_prompt("caf\xc3\x28");
  auto context = ContextWithDeadline(30);
  std::unique_ptr<grpc::ClientReader<v1::GenerateStreamResponse>> reader =
      cluster_->generation().GenerateStream(context.get(), request);
  v1::GenerateStreamResponse message;
  while (reader->Read(&message)) {
  }
  const grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("prompt[1] is not valid UTF-8 (first bad byte at 3)"));
}

TEST_F(MalformedRequestTest, HostServesAValidRequestAfterwards) {
  CallWithBytes(kGenerate, "\xff\xfe");
  absl::StatusOr<v1::GenerateResponse> response =
      cluster_->Generate(SmallRequest("still serving"), 60);
  ASSERT_TRUE(response.ok()) << response.status() << "\n"
                             << cluster_->ranks().Output(0);
  EXPECT_EQ(response->images_size(), 1);
}

}  // namespace
}  // namespace ditserve
