#ifndef DITSERVE_CORE_DIST_STARTUP_AGREEMENT_H_
#define DITSERVE_CORE_DIST_STARTUP_AGREEMENT_H_

#include <string>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "absl/status/status.h"
#include "core/dist/store_wait.h"
#include "ditserve/v1/startup.pb.h"

namespace ditserve::dist {

// How `facts` of `rank` differ from rank 0's `reference`: one entry per
// field, "<field> is <value> on rank <rank> and <value> on rank 0" (a field
// one side lacks reads "(absent)"); empty when they agree.
std::vector<std::string> DescribeDisagreement(
    int rank, const v1::StartupFacts& facts, const v1::StartupFacts& reference);

// Publishes this rank's `facts` (with the world size added) in `store` and
// compares every rank's with rank 0's, before any process group forms: ranks
// that would form groups of different shapes, serve different models or run
// different builds then fail in seconds instead of at the first collective.
// Every rank reaches the same verdict. Errors: FAILED_PRECONDITION naming
// the differing rank, each differing field and both values; UNAVAILABLE
// when a rank's facts do not arrive within wait.timeout; wait.keep_waiting's
// status when it stops the wait.
absl::Status AgreeOnStartup(c10d::Store& store, int rank, int world_size,
                            const v1::StartupFacts& facts,
                            const StoreWait& wait);

}  // namespace ditserve::dist

#endif  // DITSERVE_CORE_DIST_STARTUP_AGREEMENT_H_
