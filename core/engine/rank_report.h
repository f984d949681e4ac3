#ifndef DITSERVE_CORE_ENGINE_RANK_REPORT_H_
#define DITSERVE_CORE_ENGINE_RANK_REPORT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/base/process_memory.h"
#include "core/engine/stage_timings.h"

namespace ditserve::engine {

// What one rank says about one request after running it; gathered to every
// rank so the group agrees on the outcome.
struct RankReport {
  absl::Status status;
  StageTimings timings;
  // The rank's resident memory, and its GPU's, when it reported.
  base::ProcessMemory memory;
};

// JSON {"code": int, "message": str, "collective_failure": bool (the
// status's dist::IsCollectiveFailure), "seconds": {stage name: s},
// "resident_bytes": int, "peak_resident_bytes": int, and the
// base::ProcessMemory device fields by the same names}.
std::string SerializeRankReport(const RankReport& report);
// INTERNAL naming the problem when `text` is not such a report.
absl::StatusOr<RankReport> ParseRankReport(absl::string_view text);

// OK when every report is OK; otherwise the code of the lowest failing rank
// that was not stopped for another's failure (ABORTED, Engine::Run) and a
// message naming each failing rank with its error (ranks failing with the
// same error share one entry: "ranks 1, 2: ...").
absl::Status CombineRankStatuses(const std::vector<RankReport>& reports);

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_RANK_REPORT_H_
