#include "server/call_ownership.h"

#include <memory>

#include "core/base/monotonic_clock.h"
#include "gtest/gtest.h"
#include "server/job.h"

namespace ditserve::server {
namespace {

// A reactor as the generation service builds one: it owns itself, and the
// job's callbacks hold it.
struct Call {
  CallOwnership ownership;
};

std::shared_ptr<Job> JobHolding(const std::shared_ptr<Call>& call) {
  return std::make_shared<Job>(
      v1::InputConfig(), "", base::MonotonicNow(), base::MonotonicNow(),
      [call](v1::GenerateStreamResponse) {},
      [call](absl::StatusOr<v1::GenerateResponse>) {});
}

TEST(CallOwnershipTest, ACallOwnsItselfUntilRelease) {
  auto call = std::make_shared<Call>();
  call->ownership.Bind(call);
  const std::weak_ptr<Call> watched = call;
  call.reset();
  ASSERT_FALSE(watched.expired());
  watched.lock()->ownership.Release();
  EXPECT_TRUE(watched.expired());
}

TEST(CallOwnershipTest, ReleaseFreesACallAndTheFinishedJobThatHoldsIt) {
  auto call = std::make_shared<Call>();
  call->ownership.Bind(call);
  std::shared_ptr<Job> job = JobHolding(call);
  call->ownership.SetJob(job);
  ASSERT_TRUE(job->Finish(v1::GenerateResponse()));
  const std::weak_ptr<Call> watched_call = call;
  const std::weak_ptr<Job> watched_job = job;
  call.reset();
  job.reset();
  // The job still holds the call through its progress callback.
  ASSERT_FALSE(watched_call.expired());
  ASSERT_EQ(watched_call.lock()->ownership.job(), watched_job.lock());
  watched_call.lock()->ownership.Release();
  EXPECT_TRUE(watched_call.expired());
  EXPECT_TRUE(watched_job.expired());
}

TEST(CallOwnershipTest, AJobIsNullBeforeSetJobAndAfterRelease) {
  auto call = std::make_shared<Call>();
  EXPECT_EQ(call->ownership.job(), nullptr);
  std::shared_ptr<Job> job = JobHolding(call);
  call->ownership.SetJob(job);
  EXPECT_EQ(call->ownership.job(), job);
  call->ownership.Release();
  EXPECT_EQ(call->ownership.job(), nullptr);
}

}  // namespace
}  // namespace ditserve::server
