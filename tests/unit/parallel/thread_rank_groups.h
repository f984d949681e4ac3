#ifndef DITSERVE_TESTS_UNIT_PARALLEL_THREAD_RANK_GROUPS_H_
#define DITSERVE_TESTS_UNIT_PARALLEL_THREAD_RANK_GROUPS_H_

#include <chrono>
#include <string>
#include <vector>

#include "core/parallel/group_collectives.h"

namespace ditserve::testing {

// A group of `size` ranks run as threads of one process: real Gloo groups
// over loopback that meet in an in-memory store under `name`. Collectives
// wait at most `wait`; creating the groups, and a collective left behind,
// at most max(`wait`, 5 s).
std::vector<parallel::Group> ThreadRankGroups(const std::string& name, int size,
                                              std::chrono::milliseconds wait);

}  // namespace ditserve::testing

#endif  // DITSERVE_TESTS_UNIT_PARALLEL_THREAD_RANK_GROUPS_H_
