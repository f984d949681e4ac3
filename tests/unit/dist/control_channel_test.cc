#include "core/dist/control_channel.h"

#include <c10/util/Exception.h>

#include <chrono>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/config/config_digest.h"
#include "core/dist/sigpipe.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::dist {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::chrono::milliseconds kTimeout{5000};

// Two ranks as two threads of this process: real Gloo groups over loopback
// that meet in an in-memory store.
class TwoRankChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    IgnoreSigpipe();
    auto store = c10::make_intrusive<c10d::HashStore>();
    std::thread second([&] { groups_[1] = MakeGroup(store, 1); });
    groups_[0] = MakeGroup(store, 0);
    second.join();
  }

  static ProcessGroupPtr MakeGroup(const c10::intrusive_ptr<c10d::Store>& store,
                                   int rank) {
    auto options = c10d::ProcessGroupGloo::Options::create(kTimeout);
    options->devices.push_back(
        c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    return c10::make_intrusive<c10d::ProcessGroupGloo>(
        c10::make_intrusive<c10d::PrefixStore>("control", store), rank, 2,
        options);
  }

  ControlChannel Channel(int rank, ControlChannelOptions options = {}) {
    options.timeout = kTimeout;
    return ControlChannel(groups_[rank], rank, 2, {}, std::move(options));
  }

  static ControlMessage RunMessage() {
    ControlMessage message;
    message.kind = v1::CONTROL_KIND_RUN;
    v1::InputConfig& config = *message.run.mutable_config();
    config.set_request_id("r-7");
    config.set_sequence_number(7);
    config.add_prompt("a red fox");
    config.set_height(512);
    config.set_max_sequence_length(256);
    return message;
  }

  ProcessGroupPtr groups_[2];
};

TEST_F(TwoRankChannelTest, RunConfigArrivesByteIdenticalWithAgreement) {
  ControlChannel host = Channel(0);
  ControlChannel worker = Channel(1);
  absl::StatusOr<ControlMessage> received;
  std::thread second([&] { received = worker.Receive(); });
  absl::StatusOr<ControlMessage> sent = host.Send(RunMessage());
  second.join();
  ASSERT_TRUE(sent.ok()) << sent.status();
  ASSERT_TRUE(received.ok()) << received.status();
  EXPECT_EQ(received->kind, v1::CONTROL_KIND_RUN);
  EXPECT_EQ(received->payload,
            config::SerializeDeterministic(RunMessage().run));
  EXPECT_EQ(received->payload, sent->payload);
  EXPECT_EQ(received->digest, config::MessageDigest(RunMessage().run));
  EXPECT_EQ(received->run.config().request_id(), "r-7");
  EXPECT_TRUE(sent->agreement.ok()) << sent->agreement;
  EXPECT_TRUE(received->agreement.ok()) << received->agreement;
}

TEST_F(TwoRankChannelTest, AlteredParseIsReportedOnBothRanksNamingTheRank) {
  ControlChannel host = Channel(0);
  ControlChannel worker =
      Channel(1, {.alter_parsed_run_config = [](v1::RunConfig& run) {
                run.mutable_config()->set_max_sequence_length(512);
              }});
  v1::RunConfig altered = RunMessage().run;
  altered.mutable_config()->set_max_sequence_length(512);
  absl::StatusOr<ControlMessage> received;
  std::thread second([&] { received = worker.Receive(); });
  absl::StatusOr<ControlMessage> sent = host.Send(RunMessage());
  second.join();
  ASSERT_TRUE(sent.ok()) << sent.status();
  ASSERT_TRUE(received.ok()) << received.status();
  const std::string expected = absl::StrCat(
      "digest mismatch after broadcast of RunConfig (request_id \"r-7\", "
      "sequence 7): rank 0 sent ",
      config::DigestHex(config::MessageDigest(RunMessage().run)),
      " but rank 1 parsed digest ",
      config::DigestHex(config::MessageDigest(altered)));
  for (const absl::Status& agreement : {sent->agreement, received->agreement}) {
    EXPECT_EQ(agreement.code(), absl::StatusCode::kInternal);
    EXPECT_EQ(std::string(agreement.message()), expected);
  }
}

TEST_F(TwoRankChannelTest, RankZeroStepDecisionReachesEveryRank) {
  ControlChannel host = Channel(0);
  ControlChannel worker = Channel(1);
  absl::StatusOr<v1::StepDecision> on_worker;
  std::thread second([&] {
    on_worker = worker.BroadcastStepDecision(v1::STEP_DECISION_CONTINUE);
  });
  absl::StatusOr<v1::StepDecision> on_host =
      host.BroadcastStepDecision(v1::STEP_DECISION_CANCEL);
  second.join();
  ASSERT_TRUE(on_host.ok() && on_worker.ok());
  EXPECT_EQ(*on_host, v1::STEP_DECISION_CANCEL);
  EXPECT_EQ(*on_worker, v1::STEP_DECISION_CANCEL);
}

// A pipeline's last stage reaches a step boundary up to a step after the
// first: rank 0 must go on before the workers take its decision, and learns
// of the delivery at its next exchange.
TEST_F(TwoRankChannelTest, RankZeroGoesOnBeforeWorkersTakeItsStepDecision) {
  ControlChannel host = Channel(0);
  ControlChannel worker = Channel(1);
  absl::StatusOr<v1::StepDecision> on_host =
      host.BroadcastStepDecision(v1::STEP_DECISION_CONTINUE);
  ASSERT_TRUE(on_host.ok()) << on_host.status();
  EXPECT_EQ(*on_host, v1::STEP_DECISION_CONTINUE);
  // Only now does the worker reach the boundary.
  absl::StatusOr<v1::StepDecision> on_worker;
  absl::StatusOr<std::vector<std::string>> reports_on_worker;
  std::thread second([&] {
    on_worker = worker.BroadcastStepDecision(v1::STEP_DECISION_CANCEL);
    reports_on_worker = worker.AllGatherBytes("reports", "w");
  });
  absl::StatusOr<std::vector<std::string>> reports =
      host.AllGatherBytes("reports", "h");
  second.join();
  ASSERT_TRUE(on_worker.ok()) << on_worker.status();
  EXPECT_EQ(*on_worker, v1::STEP_DECISION_CONTINUE);
  ASSERT_TRUE(reports.ok()) << reports.status();
  ASSERT_TRUE(reports_on_worker.ok()) << reports_on_worker.status();
  EXPECT_THAT(*reports, ElementsAre("h", "w"));
}

TEST_F(TwoRankChannelTest, UndeliveredStepDecisionFailsRankZerosNextExchange) {
  ControlChannel host = Channel(0);
  ASSERT_TRUE(host.BroadcastStepDecision(v1::STEP_DECISION_CONTINUE).ok());
  // The worker never takes it.
  absl::StatusOr<v1::StepDecision> next =
      host.BroadcastStepDecision(v1::STEP_DECISION_CONTINUE);
  EXPECT_EQ(next.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(next.status().message(),
              HasSubstr("delivery of a step decision on the control group"));
}

TEST_F(TwoRankChannelTest, AllGatherBytesReturnsEveryRanksBytesInRankOrder) {
  ControlChannel host = Channel(0);
  ControlChannel worker = Channel(1);
  absl::StatusOr<std::vector<std::string>> on_worker;
  std::thread second(
      [&] { on_worker = worker.AllGatherBytes("reports", "worker report"); });
  absl::StatusOr<std::vector<std::string>> on_host =
      host.AllGatherBytes("reports", "");
  second.join();
  ASSERT_TRUE(on_host.ok()) << on_host.status();
  ASSERT_TRUE(on_worker.ok()) << on_worker.status();
  EXPECT_THAT(*on_host, ElementsAre("", "worker report"));
  EXPECT_EQ(*on_host, *on_worker);
}

TEST_F(TwoRankChannelTest, OnlyRankZeroSendsAndOnlyWorkersReceive) {
  ControlChannel host = Channel(0);
  ControlChannel worker = Channel(1);
  EXPECT_EQ(worker.Send(RunMessage()).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(host.Receive().status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(TwoRankChannelTest, PeerThatNeverJoinsIsADeadlineNotAHang) {
  ControlChannel host(groups_[0], 0, 2, {},
                      {.timeout = std::chrono::milliseconds(300)});
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<std::string>> gathered =
      host.AllGatherBytes("reports", "alone");
  EXPECT_LT(std::chrono::steady_clock::now() - start, kTimeout);
  ASSERT_FALSE(gathered.ok());
  EXPECT_EQ(gathered.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(gathered.status().message()),
              HasSubstr("length all-gather of reports on the control group"));
}

// A worker short of memory cannot buffer a frame: that ends its generation,
// not its process (nothing above a worker's loop catches).
TEST_F(TwoRankChannelTest, WhatReceivingAFrameThrowsIsTheReceiversStatus) {
  ControlChannel host(groups_[0], 0, 2, {},
                      {.timeout = std::chrono::milliseconds(300)});
  ControlChannel worker =
      Channel(1, {.alter_parsed_run_config = [](v1::RunConfig& /*run*/) {
                // As the payload buffer's allocation throws.
                TORCH_CHECK(false, "DefaultCPUAllocator: not enough memory");
              }});
  absl::StatusOr<ControlMessage> received;
  std::thread second([&] { received = worker.Receive(); });
  const absl::StatusOr<ControlMessage> sent = host.Send(RunMessage());
  second.join();
  EXPECT_EQ(received.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(received.status().message()),
              HasSubstr("rank 1 exchanging a control frame: "
                        "DefaultCPUAllocator: not enough memory"));
  EXPECT_FALSE(sent.ok()) << "the worker never joined the digest all-gather";
}

}  // namespace
}  // namespace ditserve::dist
