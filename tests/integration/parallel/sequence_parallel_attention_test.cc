// Real rank processes on loopback (see sequence_parallel_rank_program.cc):
// Ulysses, Ring and USP attention over sequence shards equal LocalAttention
// over the whole sequence on one rank, for world sizes 2 and 4, with
// sequence lengths that need padding, with and without a user key mask.

#include <chrono>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/local_cluster/rank_launcher.h"

namespace ditserve::testing {
namespace {

using ::ditserve::local_cluster::RankExit;
using ::ditserve::local_cluster::RankLauncher;

using ::testing::HasSubstr;

// float32 attention over ~10 keys of O(1) values: sharding changes only the
// order of float sums (the all-to-all moves values exactly; the ring merges
// per-block softmaxes through their log-sum-exp), which costs a few ulp.
// 1e-5 absolute leaves a margin of ~20x over the ~5e-7 observed while any
// wrong block, head or mask shows up as an error of order 0.1.
constexpr double kTolerance = 1e-5;
// Start-up of up to four LibTorch processes on two busy cores.
constexpr std::chrono::seconds kRunLimit{90};

struct Case {
  int ulysses;
  int ring;
  int sequence_tokens;
  bool user_mask;
};

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return absl::StrCat("Ulysses", c.ulysses, "Ring", c.ring, "Tokens",
                      c.sequence_tokens, c.user_mask ? "UserMask" : "NoMask");
}

// key=value fields of the first line of `output` starting with `tag`.
std::map<std::string, std::string> FieldsOf(const std::string& output,
                                            const std::string& tag) {
  std::map<std::string, std::string> fields;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(tag + " ", 0) != 0) continue;
    const size_t message = line.find(" message=");
    std::istringstream tokens(line.substr(0, message));
    std::string token;
    while (tokens >> token) {
      const size_t equals = token.find('=');
      if (equals != std::string::npos) {
        fields[token.substr(0, equals)] = token.substr(equals + 1);
      }
    }
    if (message != std::string::npos) {
      fields["message"] = line.substr(message + 9);
    }
    break;
  }
  return fields;
}

class SequenceParallelAttentionTest : public ::testing::TestWithParam<Case> {};

TEST_P(SequenceParallelAttentionTest, EveryRankMatchesSingleRankAttention) {
  const Case& c = GetParam();
  const int world = c.ulysses * c.ring;
  absl::StatusOr<std::unique_ptr<RankLauncher>> ranks = RankLauncher::Start(
      DITSERVE_SEQUENCE_PARALLEL_RANK_PROGRAM,
      {absl::StrCat("--ulysses=", c.ulysses), absl::StrCat("--ring=", c.ring),
       absl::StrCat("--sequence_tokens=", c.sequence_tokens),
       absl::StrCat("--user_mask=", c.user_mask ? "true" : "false")},
      world);
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  const std::vector<RankExit> exits = (*ranks)->WaitAll(kRunLimit);
  const char* expected_attention = c.ring > 1 && c.ulysses > 1 ? "usp"
                                   : c.ring > 1                ? "ring"
                                                               : "ulysses";
  for (int rank = 0; rank < world; ++rank) {
    const std::string output = (*ranks)->Output(rank);
    EXPECT_EQ(exits[rank].exit_code, 0) << "rank " << rank << ":\n" << output;
    std::map<std::string, std::string> result = FieldsOf(output, "RESULT");
    ASSERT_FALSE(result.empty()) << "rank " << rank << ":\n" << output;
    EXPECT_EQ(result["attention"], expected_attention);
    EXPECT_LT(std::stod(result["shard_error"]), kTolerance)
        << "rank " << rank << ":\n"
        << output;
    EXPECT_LT(std::stod(result["gathered_error"]), kTolerance)
        << "rank " << rank << ":\n"
        << output;
  }
}

// Lengths are never multiples of the degree, so the last shard is padded; 9
// tokens over 4 ranks leave the last shard all padding (a ring block whose
// keys are all masked).
INSTANTIATE_TEST_SUITE_P(
    WorldTwoAndFour, SequenceParallelAttentionTest,
    ::testing::Values(Case{2, 1, 13, false}, Case{2, 1, 13, true},
                      Case{1, 2, 13, false}, Case{1, 2, 13, true},
                      Case{4, 1, 9, false}, Case{4, 1, 9, true},
                      Case{1, 4, 9, false}, Case{1, 4, 9, true},
                      Case{2, 2, 9, false}, Case{2, 2, 9, true},
                      Case{2, 2, 14, true}),
    CaseName);

TEST(SequenceParallelAttentionFailureTest, SilentRingPeerEndsTheWaitInTime) {
  constexpr int kTimeoutMs = 2000;
  absl::StatusOr<std::unique_ptr<RankLauncher>> ranks =
      RankLauncher::Start(DITSERVE_SEQUENCE_PARALLEL_RANK_PROGRAM,
                          {"--ring=2", "--absent_rank=1",
                           absl::StrCat("--timeout_ms=", kTimeoutMs)},
                          2);
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  const RankExit exit = (*ranks)->Wait(0, kRunLimit);
  const std::string output = (*ranks)->Output(0);
  EXPECT_EQ(exit.exit_code, 3) << output;
  std::map<std::string, std::string> failure =
      FieldsOf(output, "ATTEND_FAILED");
  ASSERT_FALSE(failure.empty()) << output;
  EXPECT_EQ(failure["code"], "DEADLINE_EXCEEDED") << output;
  EXPECT_THAT(failure["message"], HasSubstr("ring attention exchange 1 of 1"));
  EXPECT_THAT(failure["message"], HasSubstr("ring group"));
}

TEST(SequenceParallelAttentionFailureTest,
     HeadsNotDivisibleByUlyssesAreAnError) {
  absl::StatusOr<std::unique_ptr<RankLauncher>> ranks = RankLauncher::Start(
      DITSERVE_SEQUENCE_PARALLEL_RANK_PROGRAM, {"--ulysses=2", "--heads=3"}, 2);
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  const std::vector<RankExit> exits = (*ranks)->WaitAll(kRunLimit);
  for (int rank = 0; rank < 2; ++rank) {
    const std::string output = (*ranks)->Output(rank);
    EXPECT_EQ(exits[rank].exit_code, 3) << output;
    std::map<std::string, std::string> failure =
        FieldsOf(output, "ATTEND_FAILED");
    EXPECT_EQ(failure["code"], "INVALID_ARGUMENT") << output;
    EXPECT_THAT(failure["message"],
                HasSubstr("attention heads (3) to be a multiple of the "
                          "ulysses degree (2)"));
  }
}

}  // namespace
}  // namespace ditserve::testing
