// Real rank processes on loopback running the rank loop (see
// rank_test_program.cc), for world sizes 1, 2 and 4.

#include <chrono>
#include <csignal>
#include <map>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/config/config_digest.h"
#include "core/engine/buffer_plan.h"
#include "ditserve/v1/control.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/injected_failure.h"
#include "tests/integration/scenarios.h"
#include "tests/support/frozen_test_config.h"
#include "tools/local_cluster/rank_launcher.h"

namespace ditserve::testing {
namespace {

using ::ditserve::local_cluster::RankExit;
using ::ditserve::local_cluster::RankLauncher;

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::SizeIs;

constexpr int kTimeoutMs = 4000;
// Start-up of up to four LibTorch processes on two busy cores, plus the
// scenario itself.
constexpr std::chrono::seconds kScenarioLimit{45};
// The rank test program's exit code when its loop ended with the group
// broken.
constexpr int kLeftTheGroup = 3;

// One printed line: its key=value fields; "message" takes the rest of the
// line.
using Fields = std::map<std::string, std::string>;

std::vector<Fields> LinesTagged(const std::string& output,
                                const std::string& tag) {
  std::vector<Fields> lines;
  std::istringstream stream(output);
  std::string line;
  while (std::getline(stream, line)) {
    if (line.rfind(tag + " ", 0) != 0) continue;
    Fields fields;
    const size_t message = line.find(" message=");
    std::istringstream tokens(line.substr(0, message));
    std::string token;
    tokens >> token;  // the tag
    while (tokens >> token) {
      const size_t equals = token.find('=');
      if (equals != std::string::npos) {
        fields[token.substr(0, equals)] = token.substr(equals + 1);
      }
    }
    if (message != std::string::npos) {
      fields["message"] = line.substr(message + 9);
    }
    lines.push_back(std::move(fields));
  }
  return lines;
}

// The OUTCOME line of `request` printed by one rank; fails the test when
// there is not exactly one.
Fields OutcomeOf(const RankLauncher& ranks, int rank,
                 const std::string& request) {
  std::vector<Fields> matching;
  for (Fields& fields : LinesTagged(ranks.Output(rank), "OUTCOME")) {
    if (fields["request"] == request) matching.push_back(fields);
  }
  EXPECT_THAT(matching, SizeIs(1)) << "rank " << rank << " output:\n"
                                   << ranks.Output(rank);
  return matching.empty() ? Fields{} : matching.front();
}

std::string BufferShape(const RankLauncher& ranks, int rank,
                        const std::string& request, absl::string_view name) {
  for (Fields& fields : LinesTagged(ranks.Output(rank), "BUFFER")) {
    if (fields["request"] == request && fields["name"] == name) {
      return fields["shape"];
    }
  }
  return "(none)";
}

v1::InputConfig Frozen(const TestConfigRequest& request, int world) {
  absl::StatusOr<v1::ParallelConfig> parallel = TestParallelConfig(world);
  EXPECT_TRUE(parallel.ok()) << parallel.status();
  absl::StatusOr<v1::InputConfig> config = FreezeTestConfig(request, *parallel);
  EXPECT_TRUE(config.ok()) << config.status();
  return *config;
}

v1::RunConfig RunConfigOf(const v1::InputConfig& config) {
  v1::RunConfig run;
  *run.mutable_config() = config;
  return run;
}

std::unique_ptr<RankLauncher> Launch(int world,
                                     const std::vector<std::string>& args) {
  std::vector<std::string> all_args = {
      absl::StrCat("--timeout_ms=", kTimeoutMs)};
  all_args.insert(all_args.end(), args.begin(), args.end());
  absl::StatusOr<std::unique_ptr<RankLauncher>> ranks =
      RankLauncher::Start(DITSERVE_RANK_TEST_PROGRAM, all_args, world);
  EXPECT_TRUE(ranks.ok()) << ranks.status();
  return ranks.ok() ? std::move(*ranks) : nullptr;
}

// Waits for every rank and expects each to have exited `code`.
void ExpectAllExit(RankLauncher& ranks, int code) {
  for (const RankExit& exit : ranks.WaitAll(kScenarioLimit)) {
    EXPECT_FALSE(exit.timed_out) << "rank " << exit.rank << " still running";
    EXPECT_EQ(exit.exit_code, code)
        << "rank " << exit.rank << " (signal " << exit.signal << ") output:\n"
        << ranks.Output(exit.rank);
  }
}

// "ranks 0, 1, ..., world - 1".
std::string RankRange(int world) {
  std::vector<int> ranks;
  for (int rank = 0; rank < world; ++rank) ranks.push_back(rank);
  return absl::StrCat("ranks ", absl::StrJoin(ranks, ", "));
}

class RankLoopTest : public ::testing::TestWithParam<int> {};

TEST_P(RankLoopTest, BroadcastConfigsReachEveryRankByteIdentical) {
  const int world = GetParam();
  std::unique_ptr<RankLauncher> ranks = Launch(world, {"--scenario=consensus"});
  ASSERT_NE(ranks, nullptr);
  ExpectAllExit(*ranks, 0);
  for (const ScenarioStep& step : ScenarioSteps("consensus")) {
    const TestConfigRequest& request = step.request;
    const v1::RunConfig sent = RunConfigOf(Frozen(request, world));
    const std::string payload_digest = config::DigestHex(
        config::StableDigest(config::SerializeDeterministic(sent)));
    for (int rank = 0; rank < world; ++rank) {
      Fields outcome = OutcomeOf(*ranks, rank, request.request_id);
      EXPECT_EQ(outcome["code"], "OK") << outcome["message"];
      EXPECT_EQ(outcome["payload_digest"], payload_digest) << "rank " << rank;
      EXPECT_EQ(outcome["digest"],
                config::DigestHex(config::MessageDigest(sent)))
          << "rank " << rank;
    }
    // Rank 0 gathered every rank's stage timings.
    bool timings_seen = false;
    for (Fields& timings : LinesTagged(ranks->Output(0), "TIMINGS")) {
      if (timings["request"] != request.request_id) continue;
      timings_seen = true;
      EXPECT_EQ(timings["ranks"], absl::StrCat(world));
    }
    EXPECT_TRUE(timings_seen);
  }
}

TEST_P(RankLoopTest, IdleGroupPingsThenEveryRankExitsZeroOnShutdown) {
  const int world = GetParam();
  std::unique_ptr<RankLauncher> ranks = Launch(
      world, {"--scenario=idle", "--idle_ms=1500", "--ping_interval_ms=100"});
  ASSERT_NE(ranks, nullptr);
  ExpectAllExit(*ranks, 0);
  for (int rank = 0; rank < world; ++rank) {
    std::vector<Fields> ends = LinesTagged(ranks->Output(rank), "LOOP_END");
    ASSERT_THAT(ends, SizeIs(1)) << ranks->Output(rank);
    EXPECT_EQ(ends[0]["code"], "OK");
  }
}

TEST_P(RankLoopTest, LongerSequenceReprepareResizesTheBuffersOnEveryRank) {
  const int world = GetParam();
  std::unique_ptr<RankLauncher> ranks = Launch(world, {"--scenario=seed"});
  ASSERT_NE(ranks, nullptr);
  ExpectAllExit(*ranks, 0);
  const std::vector<ScenarioStep> steps = ScenarioSteps("seed");
  for (int index = 0; index < 2; ++index) {
    const TestConfigRequest& request = steps[index].request;
    const v1::InputConfig config = Frozen(request, world);
    // World 1 has no sequence parallelism, so nothing to gather.
    const int sp =
        config.parallel().ring_degree() * config.parallel().ulysses_degree();
    const std::string gather_shape =
        sp == 1
            ? "(none)"
            : absl::StrCat(sp, "x", config.shapes().max_batch_per_dp_group(),
                           "x", config.shapes().shard_tokens(), "x",
                           kRankTestDimensions.token_output_channels);
    for (int rank = 0; rank < world; ++rank) {
      Fields outcome = OutcomeOf(*ranks, rank, request.request_id);
      EXPECT_EQ(outcome["code"], "OK") << outcome["message"];
      EXPECT_EQ(outcome["allocations"], absl::StrCat(index + 1));
      EXPECT_EQ(BufferShape(*ranks, rank, request.request_id,
                            engine::kSequenceGather),
                gather_shape)
          << "rank " << rank;
    }
  }
}

TEST_P(RankLoopTest, CancelAtAStepBoundaryStopsEveryRankAndTheNextConfigRuns) {
  const int world = GetParam();
  std::unique_ptr<RankLauncher> ranks = Launch(world, {"--scenario=cancel"});
  ASSERT_NE(ranks, nullptr);
  ExpectAllExit(*ranks, 0);
  for (int rank = 0; rank < world; ++rank) {
    Fields cancelled = OutcomeOf(*ranks, rank, "cancel-1");
    EXPECT_EQ(cancelled["code"], "CANCELLED");
    // Every rank stopped after the same step.
    EXPECT_THAT(cancelled["message"],
                HasSubstr(absl::StrCat(
                    world == 1 ? "rank 0" : RankRange(world),
                    ": CANCELLED: client cancelled request cancel-1 after "
                    "step 1 of 4")))
        << "rank " << rank;
    Fields served = OutcomeOf(*ranks, rank, "cancel-2");
    EXPECT_EQ(served["code"], "OK") << served["message"];
  }
}

INSTANTIATE_TEST_SUITE_P(World, RankLoopTest, ::testing::Values(1, 2, 4),
                         [](const auto& info) {
                           return absl::StrCat("world", info.param);
                         });

class RankFailureTest : public ::testing::TestWithParam<int> {};

TEST_P(RankFailureTest, AlteredConfigOnOneRankIsNamedOnEveryRankAndNextRuns) {
  const int world = GetParam();
  const int faulty = world - 1;
  std::unique_ptr<RankLauncher> ranks = Launch(
      world, {"--scenario=fault", absl::StrCat("--fault_rank=", faulty)});
  ASSERT_NE(ranks, nullptr);
  ExpectAllExit(*ranks, 0);
  const std::vector<ScenarioStep> steps = ScenarioSteps("fault");
  const v1::RunConfig sent = RunConfigOf(Frozen(steps[0].request, world));
  v1::RunConfig altered = sent;
  altered.mutable_config()->set_height(sent.config().height() + 16);
  for (int rank = 0; rank < world; ++rank) {
    Fields refused = OutcomeOf(*ranks, rank, steps[0].request.request_id);
    EXPECT_EQ(refused["code"], "INTERNAL");
    EXPECT_THAT(
        refused["message"],
        HasSubstr(absl::StrCat(
            "rank 0 sent ", config::DigestHex(config::MessageDigest(sent)),
            " but rank ", faulty, " parsed digest ",
            config::DigestHex(config::MessageDigest(altered)))))
        << "rank " << rank;
    Fields served = OutcomeOf(*ranks, rank, steps[1].request.request_id);
    EXPECT_EQ(served["code"], "OK") << served["message"];
  }
}

TEST_P(RankFailureTest, KilledRankIsNamedBySurvivorsWithinTheTimeout) {
  const int world = GetParam();
  const int victim = world == 2 ? 1 : 2;
  std::unique_ptr<RankLauncher> ranks =
      Launch(world, {"--scenario=kill", "--idle_ms=60000"});
  ASSERT_NE(ranks, nullptr);
  for (int rank = 0; rank < world; ++rank) {
    ASSERT_TRUE(ranks->WaitForOutput(rank, "request=kill-1", kScenarioLimit))
        << "rank " << rank << " output:\n"
        << ranks->Output(rank);
  }
  const auto killed_at = std::chrono::steady_clock::now();
  ranks->Kill(victim);
  // Each survivor's wait ends within the collective timeout; naming the
  // rank takes the watchdog's window (3 × 300 ms) on top.
  const auto limit = std::chrono::milliseconds(kTimeoutMs + 4000);
  for (int rank = 0; rank < world; ++rank) {
    if (rank == victim) continue;
    ASSERT_TRUE(ranks->WaitForOutput(rank, "LOOP_END", limit))
        << "rank " << rank << " did not notice within " << limit.count()
        << " ms:\n"
        << ranks->Output(rank);
    const auto noticed = std::chrono::steady_clock::now() - killed_at;
    EXPECT_LE(noticed, limit);
    std::vector<Fields> ends = LinesTagged(ranks->Output(rank), "LOOP_END");
    ASSERT_THAT(ends, SizeIs(1));
    EXPECT_EQ(ends[0]["code"], "UNAVAILABLE") << ends[0]["message"];
    EXPECT_THAT(ends[0]["message"],
                HasSubstr(absl::StrCat("rank ", victim, " lost during")))
        << "rank " << rank;
  }
  for (const RankExit& exit : ranks->WaitAll(kScenarioLimit)) {
    if (exit.rank == victim) {
      EXPECT_EQ(exit.signal, SIGKILL);
    } else {
      EXPECT_EQ(exit.exit_code, kLeftTheGroup) << "rank " << exit.rank;
    }
  }
}

// A rank that stalls past its peer's collective timeout, though alive,
// leaves that wait timed out and Gloo's pairs of the group closed: every
// rank reads the mark in the reports and leaves the group, rather than run
// the next config on the closed pairs ("could not be posted"). The stall
// ends before rank 0's wait for the reports times out too.
TEST(CollectiveFailureTest, ATimedOutCollectiveEndsTheGroupOnEveryRank) {
  constexpr int kWorld = 2;
  std::unique_ptr<RankLauncher> ranks =
      Launch(kWorld, {"--scenario=stall", "--stall_rank=1",
                      absl::StrCat("--stall_ms=", kTimeoutMs * 3 / 2)});
  ASSERT_NE(ranks, nullptr);
  ExpectAllExit(*ranks, kLeftTheGroup);
  for (int rank = 0; rank < kWorld; ++rank) {
    Fields failed = OutcomeOf(*ranks, rank, "stall-1");
    EXPECT_NE(failed["code"], "OK") << "rank " << rank;
    std::vector<Fields> ends = LinesTagged(ranks->Output(rank), "LOOP_END");
    ASSERT_THAT(ends, SizeIs(1)) << "rank " << rank;
    EXPECT_EQ(ends[0]["code"], "UNAVAILABLE") << ends[0]["message"];
    EXPECT_THAT(ends[0]["message"],
                HasSubstr("request stall-1 failed in a collective, which can "
                          "leave its process group unusable, so the rank "
                          "group is re-formed: rank 0: DEADLINE_EXCEEDED"))
        << "rank " << rank;
    for (Fields& outcome : LinesTagged(ranks->Output(rank), "OUTCOME")) {
      EXPECT_NE(outcome["request"], "stall-2") << "rank " << rank;
    }
  }
}

// Rank 0 stops (SIGSTOP, a hung host) while rank 1 waits for it mid-run.
// Rank 1's wait ends after the watchdog's hung-rank limit (6 s); its run
// then fails, and it must not post that failure: rank 0 hosts the store, so
// the post would block until the store client's timeout (20 s here, 120 s
// in the server) before the rank could report, leave the group and be
// restarted. The collective timeout is longer than both.
TEST(HungRankZeroTest, AWorkerNoticesWithinTheHungRankLimit) {
  std::unique_ptr<RankLauncher> ranks =
      Launch(2, {"--scenario=stall", "--stall_rank=1", "--stall_ms=2000",
                 "--timeout_ms=60000"});
  ASSERT_NE(ranks, nullptr);
  ASSERT_TRUE(ranks->WaitForOutput(1, "stalling", kScenarioLimit))
      << ranks->Output(1);
  // Rank 0, which started the run before rank 1, is then in its first
  // all-gather, where rank 1 will wait for it.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ranks->Signal(0, SIGSTOP);
  const auto stopped_at = std::chrono::steady_clock::now();
  // The stall, the hung-rank limit and a few heartbeats.
  const auto limit = std::chrono::seconds(15);
  const bool noticed = ranks->WaitForOutput(1, "LOOP_END", limit);
  const auto took = std::chrono::steady_clock::now() - stopped_at;
  ranks->Kill(0);
  ASSERT_TRUE(noticed) << "rank 1 did not notice within " << limit.count()
                       << " s:\n"
                       << ranks->Output(1);
  EXPECT_LE(took, limit);
  std::vector<Fields> ends = LinesTagged(ranks->Output(1), "LOOP_END");
  ASSERT_THAT(ends, SizeIs(1));
  EXPECT_EQ(ends[0]["code"], "UNAVAILABLE") << ends[0]["message"];
  EXPECT_THAT(ends[0]["message"], HasSubstr("rank 0 stopped answering"));
  EXPECT_THAT(ranks->Output(1),
              HasSubstr("not posted: the store, which rank 0 hosts, stopped "
                        "answering"));
  ranks->WaitAll(kScenarioLimit);
}

// A dp group that fails on its own between step boundaries (an out-of-memory
// error, say) while the other dp group goes on to its next boundary: the
// request fails on every rank, naming the group's ranks and their error, the
// other group stops within a step, and the group serves the next request.
// Before, the failed ranks went straight to the rank reports while the others
// waited at the step boundary, so both waited in different collectives until
// the control timeout re-formed the whole group; and when the failed group
// was not rank 0's, the others computed to the end of the run.
struct DpGroupFailure {
  int group;
  // After step 2's boundary, before its preview gather, which the other
  // group is then in; else before that boundary.
  bool after_boundary;
  InjectedFailure fail_as = InjectedFailure::kReturned;
};

// What the failed ranks report for a failure injected during `step`
// (1-based): the code the request fails with, and the message, in which the
// rank program's guard names what threw.
struct InjectedFailureReport {
  std::string code;
  std::string status;  // "<code>: <message>"
};

InjectedFailureReport ReportOf(InjectedFailure fail_as, int step) {
  const std::string injected =
      absl::StrCat("failure injected during step ", step);
  const std::string thrown =
      absl::StrCat("generating the dp group's prompts: ", injected);
  switch (fail_as) {
    case InjectedFailure::kReturned:
      return {"INTERNAL", absl::StrCat("INTERNAL: ", injected)};
    case InjectedFailure::kThrown:
      return {"INTERNAL", absl::StrCat("INTERNAL: ", thrown)};
    case InjectedFailure::kOutOfMemory:
      return {"RESOURCE_EXHAUSTED",
              absl::StrCat("RESOURCE_EXHAUSTED: ", thrown)};
  }
  return {};
}

// What the instances' names add for `fail_as`: nothing for the default.
std::string TestNameSuffix(InjectedFailure fail_as) {
  return fail_as == InjectedFailure::kReturned
             ? ""
             : absl::StrCat("_", AbslUnparseFlag(fail_as));
}

// For ctest's test list, which gtest's default (the struct's bytes,
// padding included) would make differ from one listing to the next.
void PrintTo(const DpGroupFailure& failure, std::ostream* out) {
  *out << "group " << failure.group
       << (failure.after_boundary ? " after the boundary" : "") << " "
       << AbslUnparseFlag(failure.fail_as);
}

class DpGroupFailureTest : public ::testing::TestWithParam<DpGroupFailure> {};

TEST_P(DpGroupFailureTest, TheRequestFailsAndTheGroupServesOn) {
  constexpr int kWorld = 4;  // dp 2 × ulysses 2: ranks 2 and 3 are dp group 1
  const DpGroupFailure failure = GetParam();
  std::unique_ptr<RankLauncher> ranks = Launch(
      kWorld, {"--scenario=dp_failure",
               absl::StrCat("--fail_dp_group=", failure.group), "--fail_step=1",
               absl::StrCat("--fail_after_boundary=", failure.after_boundary),
               absl::StrCat("--fail_as=", AbslUnparseFlag(failure.fail_as))});
  ASSERT_NE(ranks, nullptr);
  ExpectAllExit(*ranks, 0);
  const std::string failed_ranks =
      failure.group == 0 ? "ranks 0, 1" : "ranks 2, 3";
  const InjectedFailureReport report = ReportOf(failure.fail_as, 2);
  for (int rank = 0; rank < kWorld; ++rank) {
    Fields failed = OutcomeOf(*ranks, rank, "dp-failure-1");
    // The failed group's code, not the stopped group's ABORTED.
    EXPECT_EQ(failed["code"], report.code) << "rank " << rank;
    EXPECT_THAT(failed["message"],
                HasSubstr(absl::StrCat(failed_ranks, ": ", report.status)))
        << "rank " << rank;
    // Rank 0 stopped the other group at the next boundary it decided: for
    // its own group's failure the one after it, for group 1's the first
    // after the group posted it, which a failure before step 2's boundary may
    // or may not precede.
    const std::string stopped_ranks =
        failure.group == 0 ? "ranks 2, 3" : "ranks 0, 1";
    const std::string stopped_after =
        failure.after_boundary ? "3" : (failure.group == 0 ? "2" : "[23]");
    EXPECT_THAT(failed["message"],
                ContainsRegex(absl::StrCat(
                    stopped_ranks,
                    ": ABORTED: a dp group failed; stopped request "
                    "dp-failure-1 after step ",
                    stopped_after, " of 4")))
        << "rank " << rank;
    Fields next = OutcomeOf(*ranks, rank, "dp-failure-2");
    EXPECT_EQ(next["code"], "OK") << "rank " << rank << ": " << next["message"];
  }
}

// One rank that fails its share of a run alone (out of memory on one GPU,
// say) while its dp group's peers go on into the group's next collective:
// they stop waiting for it as soon as their watchdogs read its post, rather
// than at the collective timeout, which this test makes far longer than the
// scenario (the 12 s also bound how long rank 0 keeps the store up after the
// group broke). The request fails with the rank's own error; a peer's wait was
// left unmatched on the group's process group, so every rank then leaves
// the group for it to re-form.
struct LoneRankFailure {
  int world;
  int rank;
  // See DpGroupFailure.
  bool after_boundary;
  // The rank of the failed one's dp group waiting for it in a collective.
  int peer;
  InjectedFailure fail_as = InjectedFailure::kReturned;
};

void PrintTo(const LoneRankFailure& failure, std::ostream* out) {
  *out << "rank " << failure.rank << " of " << failure.world
       << (failure.after_boundary ? " after the boundary" : "") << " "
       << AbslUnparseFlag(failure.fail_as);
}

class LoneRankFailureTest : public ::testing::TestWithParam<LoneRankFailure> {};

TEST_P(LoneRankFailureTest, ItsPeersStopWaitingForItAtOnce) {
  const LoneRankFailure failure = GetParam();
  std::unique_ptr<RankLauncher> ranks =
      Launch(failure.world,
             {"--scenario=dp_failure", "--timeout_ms=12000",
              absl::StrCat("--fail_rank=", failure.rank), "--fail_step=1",
              absl::StrCat("--fail_after_boundary=", failure.after_boundary),
              absl::StrCat("--fail_as=", AbslUnparseFlag(failure.fail_as))});
  ASSERT_NE(ranks, nullptr);
  ExpectAllExit(*ranks, kLeftTheGroup);
  const InjectedFailureReport report = ReportOf(failure.fail_as, 2);
  const std::string own_error =
      absl::StrCat("rank ", failure.rank, ": ", report.status);
  for (int rank = 0; rank < failure.world; ++rank) {
    Fields failed = OutcomeOf(*ranks, rank, "dp-failure-1");
    EXPECT_EQ(failed["code"], report.code) << "rank " << rank;
    // Once in the failed rank's own report, once as the peer quotes it.
    const size_t own_report = failed["message"].find(own_error);
    ASSERT_NE(own_report, std::string::npos) << failed["message"];
    EXPECT_NE(failed["message"].find(own_error, own_report + 1),
              std::string::npos)
        << failed["message"];
    EXPECT_THAT(failed["message"],
                HasSubstr(absl::StrCat(
                    "rank ", failure.peer,
                    ": ABORTED: all-gather of the sequence shards on the sp "
                    "group was left: a rank of the group failed its share of "
                    "the run and will not join (",
                    own_error, ")")))
        << "rank " << rank;
    std::vector<Fields> ends = LinesTagged(ranks->Output(rank), "LOOP_END");
    ASSERT_THAT(ends, SizeIs(1)) << "rank " << rank;
    EXPECT_EQ(ends[0]["code"], "UNAVAILABLE") << ends[0]["message"];
    EXPECT_THAT(ends[0]["message"],
                HasSubstr("failed in a collective, which can leave its process "
                          "group unusable, so the rank group is re-formed"))
        << "rank " << rank;
    for (Fields& outcome : LinesTagged(ranks->Output(rank), "OUTCOME")) {
      EXPECT_NE(outcome["request"], "dp-failure-2") << "rank " << rank;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    FailingRank, LoneRankFailureTest,
    ::testing::Values(
        // Rank 0 goes on to step 3's gather after the boundary rank 1 fails
        // before.
        LoneRankFailure{2, 1, false, 0},
        // Rank 1 goes on to step 3's gather while rank 0 stops the run at
        // the boundary after it.
        LoneRankFailure{2, 0, true, 1},
        // Rank 2 waits in step 3's gather of dp group 1 while rank 0 stops
        // the run at the boundary after it.
        LoneRankFailure{4, 3, true, 2},
        // As a LibTorch error (an allocation, a kernel) fails it.
        LoneRankFailure{2, 1, false, 0, InjectedFailure::kThrown}),
    [](const auto& info) {
      return absl::StrCat("world", info.param.world, "_rank", info.param.rank,
                          info.param.after_boundary ? "_after_boundary" : "",
                          TestNameSuffix(info.param.fail_as));
    });

INSTANTIATE_TEST_SUITE_P(
    FailingDpGroup, DpGroupFailureTest,
    ::testing::Values(DpGroupFailure{0, false}, DpGroupFailure{1, false},
                      DpGroupFailure{0, true}, DpGroupFailure{1, true},
                      // Out of GPU memory: the client learns that what it asked
                      // for did not fit, and the group serves on.
                      DpGroupFailure{1, false, InjectedFailure::kOutOfMemory}),
    [](const auto& info) {
      return absl::StrCat("group", info.param.group,
                          info.param.after_boundary ? "_after_boundary" : "",
                          TestNameSuffix(info.param.fail_as));
    });

INSTANTIATE_TEST_SUITE_P(World, RankFailureTest, ::testing::Values(2, 4),
                         [](const auto& info) {
                           return absl::StrCat("world", info.param);
                         });

}  // namespace
}  // namespace ditserve::testing
