#include "server/request_intake.h"

#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/base/monotonic_clock.h"
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

// What a host's handlers hand requests to: the intake, its queue and
// metrics.
struct Host {
  Metrics metrics{"flux-dev", 1, {"0.1.0", "1.13.1", "cpu", "float32"}};
  AdmissionQueue queue{4, 0, /*hidden_size=*/64, nullptr};
  const ServedModel model;
  RequestIntake intake{&model, &queue, &metrics};
};

// A response the client cannot receive (over Generate's message limit) is
// answered with that error and counted as it, not as the run's "ok".
TEST(RequestIntakeTest, AnUndeliverableResponseIsAnsweredAndCountedAsItsError) {
  Host host;
  std::optional<absl::Status> answered;
  std::shared_ptr<Job> job = host.intake.NewJob(
      v1::InputConfig(), kNoClient, base::MonotonicNow(), nullptr,
      [&answered](absl::StatusOr<v1::GenerateResponse> outcome) {
        answered = outcome.status();
      },
      [](const v1::GenerateResponse&) {
        return absl::ResourceExhaustedError("too large for one message");
      });
  job->Finish(v1::GenerateResponse());
  ASSERT_TRUE(answered.has_value());
  EXPECT_EQ(answered->code(), absl::StatusCode::kResourceExhausted);

  absl::StatusOr<int> port = host.metrics.Serve("127.0.0.1", 0);
  ASSERT_TRUE(port.ok()) << port.status();
  absl::StatusOr<std::string> body = local_cluster::HttpGet(*port, "/metrics");
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_THAT(*body, HasSubstr("status=\"resource_exhausted\"} 1"));
  EXPECT_THAT(*body, HasSubstr("status=\"ok\"} 0"));
}

// A job answered with what --max_queue_wait_s refuses, and its answer.
struct QueuedJob {
  std::shared_ptr<Job> job;
  std::optional<absl::Status> answer;
};

// Queues a job as the gRPC and HTTP handlers make one: received and
// timed by RequestIntake.
void QueueAJob(Host& host, QueuedJob& out) {
  out.job = host.intake.NewJob(
      v1::InputConfig(), kNoClient, base::MonotonicNow(), nullptr,
      [&out](absl::StatusOr<v1::GenerateResponse> outcome) {
        out.answer = outcome.status();
      });
  ASSERT_TRUE(host.queue.Push(out.job).ok());
}

TEST(RequestIntakeTest, AJobThatWaitedPastTheQueueLimitIsRefused) {
  Host host;
  QueuedJob queued;
  QueueAJob(host, queued);
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(host.queue.ExpireWaiting(absl::Milliseconds(10)), 1);
  ASSERT_TRUE(queued.answer.has_value());
  EXPECT_EQ(queued.answer->code(), absl::StatusCode::kResourceExhausted);
}

// Run by ctest under libfaketime, which reads the process's wall-clock
// offset from the file FAKETIME_TIMESTAMP_FILE names at every call
// (FAKETIME_NO_CACHE), so that writing the file steps the clock, as NTP
// correcting a wrong clock or a resumed VM does; the monotonic clock is
// left alone (DONT_FAKE_MONOTONIC).
class WallClockStepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* file = std::getenv("FAKETIME_TIMESTAMP_FILE");
    if (file == nullptr) {
      GTEST_SKIP() << "runs under libfaketime (FAKETIME_TIMESTAMP_FILE), as "
                      "ctest runs it";
    }
    offset_file_ = file;
    StepWallClockTo("+0");
  }
  void TearDown() override {
    if (!offset_file_.empty()) StepWallClockTo("+0");
  }
  void StepWallClockTo(const std::string& offset) {
    std::ofstream(offset_file_) << offset << "\n";
  }

 private:
  std::string offset_file_;
};

// A wall clock stepped an hour ahead refuses no queued job for its wait:
// the job's times and the queue's limit are on the monotonic clock. On the
// wall clock, every job in the queue had waited an hour at once.
TEST_F(WallClockStepTest, AStepAheadRefusesNoQueuedJobForItsWait) {
  Host host;
  QueuedJob queued;
  QueueAJob(host, queued);
  const absl::Time before = absl::Now();
  StepWallClockTo("+1h");
  ASSERT_GT(absl::Now() - before, absl::Minutes(59)) << "the step did not take";
  EXPECT_EQ(host.queue.ExpireWaiting(absl::Seconds(30)), 0);
  EXPECT_FALSE(queued.answer.has_value());
  EXPECT_EQ(host.queue.depth(), 1);
}

}  // namespace
}  // namespace ditserve::server
