#include "server/health_service.h"

#include <memory>
#include <thread>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace ditserve::server {
namespace {

using grpc::health::v1::Health;
using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;

class HealthServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(&health_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = Health::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                            grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    health_.Shutdown();
    server_->Shutdown(std::chrono::system_clock::now() +
                      std::chrono::seconds(5));
  }

  grpc::Status Check(const std::string& service, HealthCheckResponse* out) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(5));
    HealthCheckRequest request;
    request.set_service(service);
    return stub_->Check(&context, request, out);
  }

  HealthService health_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<Health::Stub> stub_;
};

TEST_F(HealthServiceTest, CheckReportsTheCurrentStatus) {
  HealthCheckResponse response;
  ASSERT_TRUE(Check("", &response).ok());
  EXPECT_EQ(response.status(), HealthCheckResponse::NOT_SERVING);
  health_.SetServing(true);
  ASSERT_TRUE(Check("ditserve.v1.Generation", &response).ok());
  EXPECT_EQ(response.status(), HealthCheckResponse::SERVING);
}

TEST_F(HealthServiceTest, CheckOfUnknownServiceIsNotFound) {
  HealthCheckResponse response;
  grpc::Status status = Check("no.such.Service", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(status.error_message().find("no.such.Service"), std::string::npos);
}

TEST_F(HealthServiceTest, WatchStreamsEveryChange) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  HealthCheckRequest request;
  auto reader = stub_->Watch(&context, request);
  HealthCheckResponse response;
  ASSERT_TRUE(reader->Read(&response));
  EXPECT_EQ(response.status(), HealthCheckResponse::NOT_SERVING);
  health_.SetServing(true);
  ASSERT_TRUE(reader->Read(&response));
  EXPECT_EQ(response.status(), HealthCheckResponse::SERVING);
  health_.SetServing(false);
  ASSERT_TRUE(reader->Read(&response));
  EXPECT_EQ(response.status(), HealthCheckResponse::NOT_SERVING);
  context.TryCancel();
  while (reader->Read(&response)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

TEST_F(HealthServiceTest, WatchOfUnknownServiceSaysServiceUnknown) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  HealthCheckRequest request;
  request.set_service("no.such.Service");
  auto reader = stub_->Watch(&context, request);
  HealthCheckResponse response;
  ASSERT_TRUE(reader->Read(&response));
  EXPECT_EQ(response.status(), HealthCheckResponse::SERVICE_UNKNOWN);
  context.TryCancel();
  while (reader->Read(&response)) {
  }
}

TEST_F(HealthServiceTest, ShutdownEndsOpenWatches) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  HealthCheckRequest request;
  auto reader = stub_->Watch(&context, request);
  HealthCheckResponse response;
  ASSERT_TRUE(reader->Read(&response));
  health_.Shutdown();
  while (reader->Read(&response)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
}

}  // namespace
}  // namespace ditserve::server
