#include "core/engine/job_queue.h"

#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::engine {
namespace {

using ::testing::HasSubstr;

Job JobFor(const std::string& request_id) {
  Job job;
  job.config.set_request_id(request_id);
  return job;
}

TEST(JobQueueTest, JobsComeOutInArrivalOrder) {
  JobQueue queue(4);
  ASSERT_TRUE(queue.Push(JobFor("a")).ok());
  ASSERT_TRUE(queue.Push(JobFor("b")).ok());
  EXPECT_EQ(queue.Pop(absl::ZeroDuration()).job->config.request_id(), "a");
  EXPECT_EQ(queue.Pop(absl::ZeroDuration()).job->config.request_id(), "b");
}

TEST(JobQueueTest, FullQueueRefusesWithResourceExhausted) {
  JobQueue queue(1);
  ASSERT_TRUE(queue.Push(JobFor("a")).ok());
  absl::Status status = queue.Push(JobFor("b"));
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()), HasSubstr("capacity 1"));
}

TEST(JobQueueTest, EmptyPopReturnsAfterTheTimeout) {
  JobQueue queue(1);
  const absl::Time start = absl::Now();
  JobQueue::Popped popped = queue.Pop(absl::Milliseconds(50));
  EXPECT_FALSE(popped.job.has_value());
  EXPECT_FALSE(popped.closed);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(45));
}

TEST(JobQueueTest, PushFromAnotherThreadWakesAWaitingPop) {
  JobQueue queue(1);
  std::thread producer([&queue] {
    absl::SleepFor(absl::Milliseconds(20));
    EXPECT_TRUE(queue.Push(JobFor("late")).ok());
  });
  JobQueue::Popped popped = queue.Pop(absl::Seconds(10));
  producer.join();
  ASSERT_TRUE(popped.job.has_value());
  EXPECT_EQ(popped.job->config.request_id(), "late");
}

TEST(JobQueueTest, CloseServesQueuedJobsThenReportsClosed) {
  JobQueue queue(2);
  ASSERT_TRUE(queue.Push(JobFor("a")).ok());
  queue.Close("draining");
  EXPECT_EQ(queue.Push(JobFor("b")).code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(queue.Pop(absl::ZeroDuration()).job.has_value());
  JobQueue::Popped popped = queue.Pop(absl::Seconds(10));
  EXPECT_FALSE(popped.job.has_value());
  EXPECT_TRUE(popped.closed);
  EXPECT_EQ(queue.close_reason(), "draining");
}

}  // namespace
}  // namespace ditserve::engine
