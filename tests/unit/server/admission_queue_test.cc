#include "server/admission_queue.h"

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "core/base/monotonic_clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// FLUX.1's transformer width.
constexpr int64_t kHiddenSize = 3072;

struct Outcome {
  std::optional<absl::Status> status;
};

std::shared_ptr<Job> MakeJob(Outcome* outcome, int64_t deadline_micros = 0,
                             int priority = 0, std::string client = "") {
  v1::InputConfig config;
  config.set_deadline_unix_micros(deadline_micros);
  config.set_priority(priority);
  return std::make_shared<Job>(
      config, std::move(client), base::MonotonicNow(), base::MonotonicNow(),
      nullptr, [outcome](absl::StatusOr<v1::GenerateResponse> result) {
        outcome->status = result.status();
      });
}

TEST(AdmissionQueueTest, ReportsPositionAndRefusesWhenFull) {
  int last_depth = -1;
  AdmissionQueue queue(2, 0, kHiddenSize,
                       [&](int depth) { last_depth = depth; });
  Outcome a, b, c;
  EXPECT_EQ(*queue.Push(MakeJob(&a)), 0);
  EXPECT_EQ(*queue.Push(MakeJob(&b)), 1);
  EXPECT_EQ(last_depth, 2);
  absl::StatusOr<int> full = queue.Push(MakeJob(&c));
  EXPECT_EQ(full.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(full.status().message(), HasSubstr("--max_queue"));
}

TEST(AdmissionQueueTest, EachClientMayHaveItsShareWaitingAndNoMore) {
  AdmissionQueue queue(8, 2, kHiddenSize, nullptr);
  Outcome outcome;
  const auto push = [&](const std::string& client) {
    return queue.Push(MakeJob(&outcome, 0, 0, client));
  };
  ASSERT_TRUE(push("batch").ok());
  ASSERT_TRUE(push("batch").ok());
  const absl::StatusOr<int> third = push("batch");
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(third.status().message(),
            "client batch has 2 waiting (--max_queued_per_client); retry when "
            "one has run");
  EXPECT_TRUE(push("web").ok()) << "another client still gets in";
  ASSERT_TRUE(push("").ok());
  ASSERT_TRUE(push("").ok());
  EXPECT_EQ(push("").status().message(),
            "requests without a named token have 2 waiting "
            "(--max_queued_per_client); retry when one has run");

  ASSERT_NE(queue.Pop(absl::Seconds(1)), nullptr);
  EXPECT_TRUE(push("batch").ok()) << "a job that left the queue frees a place";
  EXPECT_EQ(queue.depth(), 5);
}

// A client with many requests waiting does not hold another's back: among
// one priority the clients alternate, each client's requests in order.
TEST(AdmissionQueueTest, ClientsOfOnePriorityTakeTurns) {
  AdmissionQueue queue(16, 0, kHiddenSize, nullptr);
  Outcome outcome;
  std::vector<std::shared_ptr<Job>> batch;
  for (int i = 0; i < 3; ++i) {
    batch.push_back(MakeJob(&outcome, 0, 0, "batch"));
    EXPECT_EQ(*queue.Push(batch.back()), i);
  }
  const std::shared_ptr<Job> web_1 = MakeJob(&outcome, 0, 0, "web");
  const std::shared_ptr<Job> web_2 = MakeJob(&outcome, 0, 0, "web");
  EXPECT_EQ(*queue.Push(web_1), 1)
      << "behind batch's first, ahead of its second";
  EXPECT_EQ(*queue.Push(web_2), 3);
  // Requests without a named token take turns as one more client.
  const std::shared_ptr<Job> unnamed = MakeJob(&outcome);
  EXPECT_EQ(*queue.Push(unnamed), 2);
  const std::shared_ptr<Job> urgent = MakeJob(&outcome, 0, 1, "batch");
  EXPECT_EQ(*queue.Push(urgent), 0) << "priority still comes first";

  for (const std::shared_ptr<Job>& expected :
       {urgent, batch[0], web_1, unnamed, batch[1], web_2, batch[2]}) {
    EXPECT_EQ(queue.Pop(absl::Seconds(1)), expected);
  }
}

// A job of one forward over a sequence of `tokens`.
std::shared_ptr<Job> JobOfWork(Outcome* outcome, const std::string& client,
                               int tokens) {
  v1::InputConfig config;
  config.add_prompt("p");
  config.set_num_inference_steps(1);
  config.mutable_shapes()->set_guidance_branches(1);
  config.mutable_shapes()->set_sequence_tokens(tokens);
  return std::make_shared<Job>(
      config, client, base::MonotonicNow(), base::MonotonicNow(), nullptr,
      [outcome](absl::StatusOr<v1::GenerateResponse> result) {
        outcome->status = result.status();
      });
}

TEST(AdmissionQueueTest, RunWorkCountsABlocksOperationsInEveryForward) {
  v1::InputConfig config;
  EXPECT_EQ(RunWork(config, kHiddenSize), 1)
      << "never 0, so that every job is a turn";
  config.add_prompt("a");
  config.add_prompt("b");
  config.set_num_inference_steps(28);
  config.mutable_shapes()->set_guidance_branches(2);
  config.mutable_shapes()->set_sequence_tokens(4608);
  constexpr double kWidth = kHiddenSize;
  const double work = RunWork(config, kHiddenSize);
  EXPECT_DOUBLE_EQ(
      work, 2.0 * 2 * 28 * 4608 * (24 * kWidth * kWidth + 4 * kWidth * 4608));
  // Attention is the part of the work per token that grows with the
  // sequence: doubling it adds as much again as attention took.
  config.mutable_shapes()->set_sequence_tokens(2 * 4608);
  const double growth = RunWork(config, kHiddenSize) / 2 / work - 1;
  EXPECT_NEAR(growth, 0.2, 1e-3)
      << "a fifth of FLUX.1's work at 1024², as admission_queue.h says";
}

// A client queues two jobs of `long_tokens`, then another client jobs of
// `short_tokens` at width `width`: the first `ahead` short ones have their
// turns before the long client's second job, the next one after it, and
// they run in that order.
void ExpectShortJobsAheadOfTheSecondLongOne(int64_t width, int long_tokens,
                                            int short_tokens, int ahead) {
  AdmissionQueue queue(ahead + 4, 0, width, nullptr);
  Outcome outcome;
  const std::shared_ptr<Job> long_1 = JobOfWork(&outcome, "long", long_tokens);
  const std::shared_ptr<Job> long_2 = JobOfWork(&outcome, "long", long_tokens);
  ASSERT_TRUE(queue.Push(long_1).ok());
  ASSERT_TRUE(queue.Push(long_2).ok());
  std::vector<std::shared_ptr<Job>> expected_order = {long_1};
  for (int i = 0; i <= ahead; ++i) {
    expected_order.push_back(JobOfWork(&outcome, "short", short_tokens));
    EXPECT_EQ(*queue.Push(expected_order.back()), i < ahead ? i + 1 : i + 2)
        << "short job " << i;
  }
  expected_order.insert(expected_order.end() - 1, long_2);
  for (const std::shared_ptr<Job>& expected : expected_order) {
    EXPECT_EQ(queue.Pop(absl::Seconds(1)), expected);
  }
}

// Turns follow work, not request counts: a client of small requests runs
// several of them in the time of another client's large one. At width 3 072
// attention is 0.05 % of these jobs' work, so turns go by tokens: the short
// client's turns at 0, 4 and 8 come before the long client's second, at 10,
// and its turn at 12 after it.
TEST(AdmissionQueueTest, ClientsTakeTurnsByTheWorkOfTheirJobs) {
  ExpectShortJobsAheadOfTheSecondLongOne(kHiddenSize, 10, 4, 3);
}

// Attention's work grows with the square of the sequence: at 384 tokens of
// width 64 it equals the rest of the block's, so one such job is the work of
// 10.3 jobs of 64 tokens rather than 6, and 11 short jobs go first.
TEST(AdmissionQueueTest, LongSequencesTakeLongerTurns) {
  ExpectShortJobsAheadOfTheSecondLongOne(64, 384, 64, 11);
}

// A job that leaves the queue, run or taken out, shortens the turns of its
// client's later jobs only: a_2's turn (1, a_1's work) then comes before
// b_2's (2), yet a_2 still goes behind a_1, which waits behind b_2.
TEST(AdmissionQueueTest, AClientsNextJobGoesBehindItsEarlierOnes) {
  for (const bool run : {true, false}) {
    SCOPED_TRACE(run ? "popped" : "removed");
    AdmissionQueue queue(8, 0, kHiddenSize, nullptr);
    Outcome outcome;
    const std::shared_ptr<Job> a_0 = JobOfWork(&outcome, "a", 3);
    const std::shared_ptr<Job> b_1 = JobOfWork(&outcome, "b", 2);
    const std::shared_ptr<Job> b_2 = JobOfWork(&outcome, "b", 2);
    const std::shared_ptr<Job> a_1 = JobOfWork(&outcome, "a", 1);
    for (const std::shared_ptr<Job>& job : {a_0, b_1, b_2, a_1}) {
      ASSERT_TRUE(queue.Push(job).ok());
    }
    if (run) {
      EXPECT_EQ(queue.Pop(absl::Seconds(1)), a_0);
    } else {
      EXPECT_TRUE(queue.Remove(a_0));
    }
    const std::shared_ptr<Job> a_2 = JobOfWork(&outcome, "a", 1);
    EXPECT_EQ(*queue.Push(a_2), 3) << "behind a_1";
    for (const std::shared_ptr<Job>& expected : {b_1, b_2, a_1, a_2}) {
      EXPECT_EQ(queue.Pop(absl::Seconds(1)), expected);
    }
  }
}

TEST(AdmissionQueueTest, PopsInArrivalOrder) {
  AdmissionQueue queue(4, 0, kHiddenSize, nullptr);
  Outcome a, b;
  std::shared_ptr<Job> first = MakeJob(&a);
  std::shared_ptr<Job> second = MakeJob(&b);
  ASSERT_TRUE(queue.Push(first).ok());
  ASSERT_TRUE(queue.Push(second).ok());
  EXPECT_EQ(queue.Pop(absl::Seconds(1)), first);
  EXPECT_EQ(queue.Pop(absl::Seconds(1)), second);
  EXPECT_EQ(queue.depth(), 0);
}

TEST(AdmissionQueueTest, HigherPriorityGoesFirstAndEqualOnesKeepArrivalOrder) {
  AdmissionQueue queue(8, 0, kHiddenSize, nullptr);
  Outcome outcome;
  const std::shared_ptr<Job> normal_1 = MakeJob(&outcome);
  const std::shared_ptr<Job> low = MakeJob(&outcome, 0, -3);
  const std::shared_ptr<Job> normal_2 = MakeJob(&outcome);
  const std::shared_ptr<Job> high_1 = MakeJob(&outcome, 0, 5);
  const std::shared_ptr<Job> high_2 = MakeJob(&outcome, 0, 5);
  const std::shared_ptr<Job> higher = MakeJob(&outcome, 0, 9);
  // The position counts the jobs ahead when it is admitted.
  EXPECT_EQ(*queue.Push(normal_1), 0);
  EXPECT_EQ(*queue.Push(low), 1);
  EXPECT_EQ(*queue.Push(normal_2), 1);
  EXPECT_EQ(*queue.Push(high_1), 0);
  EXPECT_EQ(*queue.Push(high_2), 1);
  EXPECT_EQ(*queue.Push(higher), 0);
  for (const std::shared_ptr<Job>& expected :
       {higher, high_1, high_2, normal_1, normal_2, low}) {
    EXPECT_EQ(queue.Pop(absl::Seconds(1)), expected);
  }
}

TEST(AdmissionQueueTest, PopTimesOutWhenEmpty) {
  AdmissionQueue queue(1, 0, kHiddenSize, nullptr);
  const absl::Time start = absl::Now();
  EXPECT_EQ(queue.Pop(absl::Milliseconds(50)), nullptr);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(45));
}

TEST(AdmissionQueueTest, PopWakesForAJobPushedLater) {
  AdmissionQueue queue(1, 0, kHiddenSize, nullptr);
  Outcome a;
  std::shared_ptr<Job> job = MakeJob(&a);
  std::thread pusher([&] {
    absl::SleepFor(absl::Milliseconds(20));
    ASSERT_TRUE(queue.Push(job).ok());
  });
  EXPECT_EQ(queue.Pop(absl::Seconds(10)), job);
  pusher.join();
}

TEST(AdmissionQueueTest, CancelledJobIsDroppedAndAnswered) {
  AdmissionQueue queue(4, 0, kHiddenSize, nullptr);
  Outcome cancelled, live;
  std::shared_ptr<Job> dropped = MakeJob(&cancelled);
  std::shared_ptr<Job> kept = MakeJob(&live);
  ASSERT_TRUE(queue.Push(dropped).ok());
  ASSERT_TRUE(queue.Push(kept).ok());
  dropped->Cancel();
  EXPECT_EQ(queue.Pop(absl::Seconds(1)), kept);
  ASSERT_TRUE(cancelled.status.has_value());
  EXPECT_EQ(cancelled.status->code(), absl::StatusCode::kCancelled);
  EXPECT_FALSE(live.status.has_value());
}

TEST(AdmissionQueueTest, ExpiredJobIsDroppedWithDeadlineExceeded) {
  AdmissionQueue queue(4, 0, kHiddenSize, nullptr);
  Outcome expired;
  ASSERT_TRUE(
      queue.Push(MakeJob(&expired, absl::ToUnixMicros(absl::Now()) - 1)).ok());
  EXPECT_EQ(queue.Pop(absl::Milliseconds(10)), nullptr);
  ASSERT_TRUE(expired.status.has_value());
  EXPECT_EQ(expired.status->code(), absl::StatusCode::kDeadlineExceeded);
}

// The client's deadline fires a little before ours: its cancellation then
// arrives while our copy of the deadline is still ahead.
TEST(AdmissionQueueTest, CancelAtTheDeadlineCountsAsDeadlineExceeded) {
  AdmissionQueue queue(4, 0, kHiddenSize, nullptr);
  Outcome at_deadline, early;
  std::shared_ptr<Job> overdue = MakeJob(
      &at_deadline, absl::ToUnixMicros(absl::Now() + absl::Milliseconds(100)));
  std::shared_ptr<Job> cancelled =
      MakeJob(&early, absl::ToUnixMicros(absl::Now() + absl::Seconds(30)));
  ASSERT_TRUE(queue.Push(overdue).ok());
  ASSERT_TRUE(queue.Push(cancelled).ok());
  overdue->Cancel();
  cancelled->Cancel();
  EXPECT_EQ(queue.Pop(absl::Milliseconds(10)), nullptr);
  ASSERT_TRUE(at_deadline.status.has_value());
  EXPECT_EQ(at_deadline.status->code(), absl::StatusCode::kDeadlineExceeded);
  ASSERT_TRUE(early.status.has_value());
  EXPECT_EQ(early.status->code(), absl::StatusCode::kCancelled);
}

// The margin that names a late cancel does not cut short a deadline nobody
// cancelled at.
TEST(AdmissionQueueTest, JobNearItsDeadlineRunsAndJoinsARun) {
  AdmissionQueue queue(4, 0, kHiddenSize, nullptr);
  Outcome leader_outcome, joiner_outcome;
  const int64_t soon =
      absl::ToUnixMicros(absl::Now() + absl::Milliseconds(240));
  std::shared_ptr<Job> leader = MakeJob(&leader_outcome, soon);
  std::shared_ptr<Job> joiner = MakeJob(&joiner_outcome, soon);
  ASSERT_TRUE(queue.Push(leader).ok());
  ASSERT_TRUE(queue.Push(joiner).ok());
  EXPECT_EQ(queue.Pop(absl::Milliseconds(10)), leader);
  EXPECT_THAT(queue.TakeMatching([](const Job&) { return true; }),
              ElementsAre(joiner));
  EXPECT_FALSE(leader_outcome.status.has_value());
  EXPECT_FALSE(joiner_outcome.status.has_value());
}

TEST(AdmissionQueueTest, JobsThatWaitedPastTheLimitAreRefusedTheRestStay) {
  int last_depth = -1;
  AdmissionQueue queue(4, 0, kHiddenSize,
                       [&](int depth) { last_depth = depth; });
  Outcome early, late;
  // Jobs that entered the queue 31 and 11 seconds ago.
  const auto job_enqueued_ago = [](absl::Duration ago, Outcome& outcome) {
    const absl::Time enqueued = base::MonotonicNow() - ago;
    return std::make_shared<Job>(
        v1::InputConfig(), "", enqueued, enqueued, nullptr,
        [&outcome](absl::StatusOr<v1::GenerateResponse> result) {
          outcome.status = result.status();
        });
  };
  std::shared_ptr<Job> early_job = job_enqueued_ago(absl::Seconds(31), early);
  std::shared_ptr<Job> late_job = job_enqueued_ago(absl::Seconds(11), late);
  ASSERT_TRUE(queue.Push(early_job).ok());
  ASSERT_TRUE(queue.Push(late_job).ok());

  EXPECT_EQ(queue.ExpireWaiting(absl::Seconds(35)), 0);
  EXPECT_EQ(queue.ExpireWaiting(absl::Seconds(30)), 1);
  ASSERT_TRUE(early.status.has_value());
  EXPECT_EQ(early.status->code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(early.status->message()),
              ::testing::MatchesRegex(
                  "waited 31(\\.[0-9]+)?s in the queue, longer than "
                  "--max_queue_wait_s 30; the server is overloaded, retry "
                  "later or elsewhere"));
  EXPECT_FALSE(late.status.has_value());
  EXPECT_EQ(last_depth, 1);
  EXPECT_EQ(queue.Pop(absl::ZeroDuration()), late_job);
}

// The wait limit refuses for overload; a job its client gave up on is
// counted as what it is.
TEST(AdmissionQueueTest, AWaitLimitAnswersCancelledAndExpiredJobsAsSuch) {
  AdmissionQueue queue(4, 0, kHiddenSize, nullptr);
  Outcome cancelled, expired;
  std::shared_ptr<Job> cancelled_job = MakeJob(&cancelled);
  std::shared_ptr<Job> expired_job =
      MakeJob(&expired, absl::ToUnixMicros(absl::Now()) - 1);
  ASSERT_TRUE(queue.Push(cancelled_job).ok());
  ASSERT_TRUE(queue.Push(expired_job).ok());
  cancelled_job->Cancel();
  // Neither is refused for overload.
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_EQ(queue.ExpireWaiting(absl::Milliseconds(10)), 0);
  EXPECT_EQ(queue.depth(), 0);
  ASSERT_TRUE(cancelled.status.has_value() && expired.status.has_value());
  EXPECT_EQ(cancelled.status->code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(expired.status->code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(AdmissionQueueTest, DrainingRefusesNewJobsButKeepsQueuedOnes) {
  AdmissionQueue queue(4, 0, kHiddenSize, nullptr);
  Outcome a, b;
  std::shared_ptr<Job> queued = MakeJob(&a);
  ASSERT_TRUE(queue.Push(queued).ok());
  queue.StartDraining();
  EXPECT_EQ(queue.Push(MakeJob(&b)).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(queue.Pop(absl::Seconds(1)), queued);
}

TEST(AdmissionQueueTest, PauseRefusesWithItsReasonUntilResumedButNotDraining) {
  AdmissionQueue queue(4, 0, kHiddenSize, nullptr);
  Outcome a, b, c, d;
  queue.Pause(absl::UnavailableError("the rank group is re-forming"));
  const absl::StatusOr<int> paused = queue.Push(MakeJob(&a));
  EXPECT_EQ(paused.status(),
            absl::UnavailableError("the rank group is re-forming"));
  queue.Resume();
  EXPECT_TRUE(queue.Push(MakeJob(&b)).ok());
  queue.StartDraining();
  queue.Resume();
  EXPECT_THAT(std::string(queue.Push(MakeJob(&c)).status().message()),
              HasSubstr("draining"));
  queue.Pause(absl::UnavailableError("re-forming"));
  EXPECT_THAT(std::string(queue.Push(MakeJob(&d)).status().message()),
              HasSubstr("draining"));
}

TEST(AdmissionQueueTest, FinishQueuedAnswersEveryJobCancelledOnesAsCancelled) {
  int last_depth = -1;
  AdmissionQueue queue(4, 0, kHiddenSize,
                       [&](int depth) { last_depth = depth; });
  Outcome a, b, cancelled;
  ASSERT_TRUE(queue.Push(MakeJob(&a)).ok());
  std::shared_ptr<Job> cancelled_job = MakeJob(&cancelled);
  ASSERT_TRUE(queue.Push(cancelled_job).ok());
  ASSERT_TRUE(queue.Push(MakeJob(&b)).ok());
  cancelled_job->Cancel();
  const absl::Status why = absl::UnavailableError("the group did not re-form");
  EXPECT_EQ(queue.FinishQueued(why), 2);
  EXPECT_EQ(a.status, why);
  EXPECT_EQ(b.status, why);
  ASSERT_TRUE(cancelled.status.has_value());
  EXPECT_EQ(cancelled.status->code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(last_depth, 0);
  EXPECT_EQ(queue.FinishQueued(why), 0);
}

TEST(AdmissionQueueTest, RemoveTakesOutOnlyQueuedJobs) {
  AdmissionQueue queue(4, 0, kHiddenSize, nullptr);
  Outcome a, b;
  std::shared_ptr<Job> first = MakeJob(&a);
  std::shared_ptr<Job> second = MakeJob(&b);
  ASSERT_TRUE(queue.Push(first).ok());
  ASSERT_TRUE(queue.Push(second).ok());
  EXPECT_TRUE(queue.Remove(first));
  EXPECT_FALSE(queue.Remove(first));
  EXPECT_EQ(queue.depth(), 1);
  EXPECT_EQ(queue.Pop(absl::Seconds(1)), second);
}

TEST(AdmissionQueueTest, OnAdmittedRunsWithThePosition) {
  AdmissionQueue queue(4, 0, kHiddenSize, nullptr);
  Outcome a, b;
  ASSERT_TRUE(queue.Push(MakeJob(&a)).ok());
  int seen = -1;
  ASSERT_TRUE(
      queue.Push(MakeJob(&b), [&](int position) { seen = position; }).ok());
  EXPECT_EQ(seen, 1);
}

TEST(AdmissionQueueTest, TakeMatchingTakesInOrderAndLeavesTheRest) {
  int last_depth = -1;
  AdmissionQueue queue(8, 0, kHiddenSize,
                       [&](int depth) { last_depth = depth; });
  Outcome outcomes[5];
  std::vector<std::shared_ptr<Job>> jobs;
  for (Outcome& outcome : outcomes) {
    jobs.push_back(MakeJob(&outcome));
    ASSERT_TRUE(queue.Push(jobs.back()).ok());
  }
  jobs[3]->Cancel();
  std::vector<const Job*> asked;
  const std::vector<std::shared_ptr<Job>> taken =
      queue.TakeMatching([&](const Job& job) {
        asked.push_back(&job);
        return &job != jobs[1].get();
      });
  // The cancelled job is neither offered nor taken: Pop answers it.
  EXPECT_THAT(asked, ::testing::ElementsAre(jobs[0].get(), jobs[1].get(),
                                            jobs[2].get(), jobs[4].get()));
  EXPECT_THAT(taken, ::testing::ElementsAre(jobs[0], jobs[2], jobs[4]));
  EXPECT_EQ(last_depth, 2);
  EXPECT_EQ(queue.Pop(absl::ZeroDuration()), jobs[1]);
  EXPECT_EQ(queue.Pop(absl::ZeroDuration()), nullptr);
  EXPECT_EQ(outcomes[3].status->code(), absl::StatusCode::kCancelled);
}

TEST(JobTest, FinishesExactlyOnce) {
  Outcome outcome;
  std::shared_ptr<Job> job = MakeJob(&outcome);
  EXPECT_TRUE(job->Finish(absl::CancelledError("first")));
  EXPECT_FALSE(job->Finish(absl::InternalError("second")));
  EXPECT_EQ(outcome.status->code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(job->finished());
}

TEST(JobTest, StopsAtItsDeadlineAndNamesACancelJustBeforeIt) {
  Outcome outcome;
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  std::shared_ptr<Job> job = MakeJob(&outcome, absl::ToUnixMicros(deadline));
  const absl::Time just_before = deadline - absl::Milliseconds(100);
  EXPECT_EQ(job->StopCode(just_before), std::nullopt);
  EXPECT_EQ(job->StopCode(deadline), absl::StatusCode::kDeadlineExceeded);
  job->Cancel();
  EXPECT_EQ(job->StopCode(just_before), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(job->StopCode(deadline - absl::Seconds(1)),
            absl::StatusCode::kCancelled);

  std::shared_ptr<Job> open_ended = MakeJob(&outcome);
  EXPECT_EQ(open_ended->StopCode(absl::Now() + absl::Hours(24 * 365)),
            std::nullopt);
  open_ended->Cancel();
  EXPECT_EQ(open_ended->StopCode(absl::Now()), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace ditserve::server
