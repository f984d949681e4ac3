#include "core/dist/rank_env.h"

#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::dist {
namespace {

using ::testing::HasSubstr;

using Env = std::map<std::string, std::string>;

EnvLookup LookupIn(const Env& env) {
  return [env](const char* name) -> std::optional<std::string> {
    auto found = env.find(name);
    if (found == env.end()) return std::nullopt;
    return found->second;
  };
}

Env Torchrun() {
  return {{"RANK", "3"},
          {"WORLD_SIZE", "4"},
          {"LOCAL_RANK", "1"},
          {"MASTER_ADDR", "10.0.0.1"},
          {"MASTER_PORT", "29500"}};
}

void ExpectInvalid(const RankEnvOverrides& overrides, const Env& env,
                   const std::string& needle) {
  absl::StatusOr<RankEnv> resolved = ResolveRankEnv(overrides, LookupIn(env));
  ASSERT_FALSE(resolved.ok()) << "accepted rank " << resolved->rank;
  EXPECT_EQ(resolved.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(resolved.status().message()), HasSubstr(needle));
}

TEST(RankEnvTest, TorchrunVariablesAreRead) {
  absl::StatusOr<RankEnv> env = ResolveRankEnv({}, LookupIn(Torchrun()));
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->rank, 3);
  EXPECT_EQ(env->world_size, 4);
  EXPECT_EQ(env->local_rank, 1);
  EXPECT_EQ(env->master_addr, "10.0.0.1");
  EXPECT_EQ(env->master_port, 29500);
}

TEST(RankEnvTest, OverridesWinOverVariables) {
  RankEnvOverrides overrides;
  overrides.rank = 2;
  overrides.master_addr = "127.0.0.1";
  overrides.master_port = 1234;
  absl::StatusOr<RankEnv> env = ResolveRankEnv(overrides, LookupIn(Torchrun()));
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->rank, 2);
  EXPECT_EQ(env->master_addr, "127.0.0.1");
  EXPECT_EQ(env->master_port, 1234);
}

TEST(RankEnvTest, OverridesAloneSufficeWithoutVariables) {
  RankEnvOverrides overrides;
  overrides.rank = 1;
  overrides.world_size = 2;
  overrides.master_addr = "localhost";
  overrides.master_port = 4000;
  absl::StatusOr<RankEnv> env = ResolveRankEnv(overrides, LookupIn({}));
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->local_rank, 1);
}

TEST(RankEnvTest, MissingLocalRankDefaultsToRank) {
  Env env = Torchrun();
  env.erase("LOCAL_RANK");
  absl::StatusOr<RankEnv> resolved = ResolveRankEnv({}, LookupIn(env));
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->local_rank, 3);
}

// systemd's example environment: one rank per machine, no LOCAL_RANK. Rank 3
// must take its machine's GPU 0, not cuda:3.
TEST(RankEnvTest, MissingLocalRankIsThePlaceOnItsMachine) {
  Env env = Torchrun();
  env.erase("LOCAL_RANK");
  env["LOCAL_WORLD_SIZE"] = "1";
  absl::StatusOr<RankEnv> resolved = ResolveRankEnv({}, LookupIn(env));
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->local_rank, 0);
  env["LOCAL_WORLD_SIZE"] = "2";
  resolved = ResolveRankEnv({}, LookupIn(env));
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->local_rank, 1);
  env["LOCAL_WORLD_SIZE"] = "0";
  ExpectInvalid({}, env, "LOCAL_WORLD_SIZE=\"0\" is not a positive integer");
}

TEST(RankEnvTest, MissingRankIsAnError) {
  Env env = Torchrun();
  env.erase("RANK");
  ExpectInvalid({}, env, "RANK is not set and --rank was not given");
}

TEST(RankEnvTest, MissingMasterAddrIsAnError) {
  Env env = Torchrun();
  env.erase("MASTER_ADDR");
  ExpectInvalid({}, env, "MASTER_ADDR is not set");
}

TEST(RankEnvTest, NonIntegerWorldSizeIsAnError) {
  Env env = Torchrun();
  env["WORLD_SIZE"] = "four";
  ExpectInvalid({}, env, "WORLD_SIZE=\"four\" is not an integer");
}

TEST(RankEnvTest, RankAtOrAboveWorldSizeIsAnError) {
  Env env = Torchrun();
  env["RANK"] = "4";
  ExpectInvalid({}, env, "RANK (--rank) 4 must be in [0, 4)");
}

TEST(RankEnvTest, ZeroWorldSizeIsAnError) {
  Env env = Torchrun();
  env["WORLD_SIZE"] = "0";
  ExpectInvalid({}, env, "WORLD_SIZE (--world_size) 0 must be at least 1");
}

TEST(RankEnvTest, LocalRankAboveRankIsAnError) {
  Env env = Torchrun();
  env["LOCAL_RANK"] = "5";
  ExpectInvalid({}, env, "LOCAL_RANK (--local_rank) 5 must be in [0, 3]");
}

TEST(RankEnvTest, PortOutOfRangeIsAnError) {
  Env env = Torchrun();
  env["MASTER_PORT"] = "70000";
  ExpectInvalid({}, env, "MASTER_PORT (--master_port) 70000 must be in");
}

}  // namespace
}  // namespace ditserve::dist
