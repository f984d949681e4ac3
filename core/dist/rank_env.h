#ifndef DITSERVE_CORE_DIST_RANK_ENV_H_
#define DITSERVE_CORE_DIST_RANK_ENV_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace ditserve::dist {

// Where this process sits in the group, as torchrun and Kubernetes
// LeaderWorkerSet describe it.
struct RankEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr;
  int master_port = 0;
};

// Command-line values; a set field wins over the environment variable.
struct RankEnvOverrides {
  std::optional<int> rank;
  std::optional<int> world_size;
  std::optional<int> local_rank;
  std::optional<std::string> master_addr;
  std::optional<int> master_port;
};

// Returns the value of an environment variable, or nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;

// Reads RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT through
// `lookup`, applies `overrides` and checks them (LOCAL_RANK, when neither it
// nor --local_rank is given, is RANK % LOCAL_WORLD_SIZE, or RANK without
// LOCAL_WORLD_SIZE): every value present and an
// integer where one is expected, world size >= 1, 0 <= rank < world size,
// 0 <= local rank <= rank, port in 1..65535, address not empty. Errors are
// INVALID_ARGUMENT naming the variable (and flag), the value and the range.
absl::StatusOr<RankEnv> ResolveRankEnv(const RankEnvOverrides& overrides,
                                       const EnvLookup& lookup);

// ResolveRankEnv over the process environment.
absl::StatusOr<RankEnv> ResolveRankEnvFromProcess(
    const RankEnvOverrides& overrides);

}  // namespace ditserve::dist

#endif  // DITSERVE_CORE_DIST_RANK_ENV_H_
