#include "core/dist/rank_env.h"

#include <cstdlib>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace ditserve::dist {
namespace {

// One integer setting: the override wins, else the variable must hold an
// integer.
absl::StatusOr<int> ResolveInt(const char* variable, const char* flag,
                               const std::optional<int>& override_value,
                               const EnvLookup& lookup) {
  if (override_value.has_value()) return *override_value;
  std::optional<std::string> text = lookup(variable);
  if (!text.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(variable, " is not set and --", flag,
                     " was not given; launch under torchrun or set it"));
  }
  int value = 0;
  if (!absl::SimpleAtoi(*text, &value)) {
    return absl::InvalidArgumentError(absl::StrCat(
        variable, "=\"", *text, "\" is not an integer (--", flag, ")"));
  }
  return value;
}

}  // namespace

absl::StatusOr<RankEnv> ResolveRankEnv(const RankEnvOverrides& overrides,
                                       const EnvLookup& lookup) {
  RankEnv env;
  ASSIGN_OR_RETURN(int world_size, ResolveInt("WORLD_SIZE", "world_size",
                                              overrides.world_size, lookup));
  ASSIGN_OR_RETURN(int rank,
                   ResolveInt("RANK", "rank", overrides.rank, lookup));
  // torchrun always sets LOCAL_RANK. A hand-written launch may omit it:
  // with LOCAL_WORLD_SIZE ranks per machine placed in order (torchrun's
  // layout; systemd's example runs one per machine) it is the rank's place
  // on its machine, and without LOCAL_WORLD_SIZE every rank is on this one.
  std::optional<int> local_override = overrides.local_rank;
  if (!local_override.has_value() && !lookup("LOCAL_RANK").has_value()) {
    local_override = rank;
    if (const std::optional<std::string> text = lookup("LOCAL_WORLD_SIZE")) {
      int per_machine = 0;
      if (!absl::SimpleAtoi(*text, &per_machine) || per_machine < 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "LOCAL_WORLD_SIZE=\"", *text,
            "\" is not a positive integer (it places LOCAL_RANK, which is "
            "not set)"));
      }
      local_override = rank % per_machine;
    }
  }
  ASSIGN_OR_RETURN(int local_rank, ResolveInt("LOCAL_RANK", "local_rank",
                                              local_override, lookup));
  ASSIGN_OR_RETURN(int port, ResolveInt("MASTER_PORT", "master_port",
                                        overrides.master_port, lookup));

  if (world_size < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "WORLD_SIZE (--world_size) ", world_size, " must be at least 1"));
  }
  if (rank < 0 || rank >= world_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("RANK (--rank) ", rank, " must be in [0, ", world_size,
                     ") for WORLD_SIZE ", world_size));
  }
  if (local_rank < 0 || local_rank > rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("LOCAL_RANK (--local_rank) ", local_rank,
                     " must be in [0, ", rank, "] for RANK ", rank));
  }
  if (port < 1 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MASTER_PORT (--master_port) ", port, " must be in [1, 65535]"));
  }
  std::optional<std::string> addr = overrides.master_addr.has_value()
                                        ? overrides.master_addr
                                        : lookup("MASTER_ADDR");
  if (!addr.has_value() || addr->empty()) {
    return absl::InvalidArgumentError(
        "MASTER_ADDR is not set or empty and --master_addr was not given; it "
        "must name the host of rank 0");
  }
  env.world_size = world_size;
  env.rank = rank;
  env.local_rank = local_rank;
  env.master_port = port;
  env.master_addr = *addr;
  return env;
}

absl::StatusOr<RankEnv> ResolveRankEnvFromProcess(
    const RankEnvOverrides& overrides) {
  return ResolveRankEnv(overrides,
                        [](const char* name) -> std::optional<std::string> {
                          const char* value = std::getenv(name);
                          if (value == nullptr) return std::nullopt;
                          return std::string(value);
                        });
}

}  // namespace ditserve::dist
