#include "server/request_intake.h"

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/admission_queue.h"
#include "server/bearer_auth.h"
#include "server/metrics.h"
#include "server/served_model.h"
#include "tools/local_cluster/http_get.h"

namespace ditserve::server {
namespace {

using ::testing::HasSubstr;

// A response the client cannot receive (over Generate's message limit) is
// answered with that error and counted as it, not as the run's "ok".
TEST(RequestIntakeTest, AnUndeliverableResponseIsAnsweredAndCountedAsItsError) {
  Metrics metrics("flux-dev", 1, {"0.1.0", "1.13.1", "cpu", "float32"});
  AdmissionQueue queue(4, 0, /*hidden_size=*/64, nullptr);
  const ServedModel model;
  RequestIntake intake(&model, &queue, &metrics);
  std::optional<absl::Status> answered;
  std::shared_ptr<Job> job = intake.NewJob(
      v1::InputConfig(), kNoClient, absl::Now(), nullptr,
      [&answered](absl::StatusOr<v1::GenerateResponse> outcome) {
        answered = outcome.status();
      },
      [](const v1::GenerateResponse&) {
        return absl::ResourceExhaustedError("too large for one message");
      });
  job->Finish(v1::GenerateResponse());
  ASSERT_TRUE(answered.has_value());
  EXPECT_EQ(answered->code(), absl::StatusCode::kResourceExhausted);

  absl::StatusOr<int> port = metrics.Serve("127.0.0.1", 0);
  ASSERT_TRUE(port.ok()) << port.status();
  absl::StatusOr<std::string> body = local_cluster::HttpGet(*port, "/metrics");
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_THAT(*body, HasSubstr("status=\"resource_exhausted\"} 1"));
  EXPECT_THAT(*body, HasSubstr("status=\"ok\"} 0"));
}

}  // namespace
}  // namespace ditserve::server
