#ifndef DITSERVE_CORE_ENGINE_REQUEST_OUTCOME_H_
#define DITSERVE_CORE_ENGINE_REQUEST_OUTCOME_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "core/base/process_memory.h"
#include "core/engine/stage_timings.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::engine {

// How one config ended, as every rank of the group agreed.
struct RequestOutcome {
  // The config as this rank parsed it.
  v1::InputConfig config;
  // config::StableDigest of the bytes rank 0 broadcast.
  uint64_t payload_digest = 0;
  // config::MessageDigest of the RunConfig this rank parsed.
  uint64_t digest = 0;
  // OK, or the failure of the first failing stage on any rank, naming it.
  absl::Status status;
  // The gathered output on rank 0 when status is OK; undefined elsewhere.
  at::Tensor output;
  // Every rank's stage timings, indexed by rank (empty when the request
  // failed before it was prepared).
  std::vector<StageTimings> rank_timings;
  // Every rank's resident memory after the request, indexed by rank (empty
  // as rank_timings).
  std::vector<base::ProcessMemory> rank_memory;
};

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_REQUEST_OUTCOME_H_
