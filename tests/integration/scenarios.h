#ifndef DITSERVE_TESTS_INTEGRATION_SCENARIOS_H_
#define DITSERVE_TESTS_INTEGRATION_SCENARIOS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/families/model_dimensions.h"
#include "tests/support/frozen_test_config.h"

namespace ditserve::testing {

// The model dimensions every rank of the rank test program plans its
// buffers with.
inline constexpr families::ModelDimensions kRankTestDimensions{
    .hidden_size = 8, .token_output_channels = 12};

// One config rank 0 submits.
struct ScenarioStep {
  TestConfigRequest request;
  // Rank 0's observer cancels the run after this step (0-based); -1 never.
  int cancel_after_step = -1;
};

// The configs rank 0 of the rank test program submits, in order, per
// scenario; the tests freeze the same requests to know what every rank must
// have received.
//   consensus: two configs of different prompt counts.
//   fault:     the fault rank alters the first one it parses; the second
//              must run normally.
//   seed:      max_sequence_length 256, then 512 (the field failure that
//              motivated the shape key).
//   cancel:    the first is cancelled after its first step; the second runs.
//   kill:      one config, then idle pings until a rank is killed.
//   stall:     the stall rank stalls the first config past its peers'
//              collective timeout, which re-forms the group: the second
//              must not run on its groups.
//   dp_failure: the fail dp group's ranks, or the fail rank alone, fail the
//              first config (4 steps, a preview after step 2) on their own
//              mid-run, while the other ranks go on: the request fails, and
//              the second runs on the same group unless a failed rank left
//              a peer waiting in a collective of its dp group.
//   idle:      no config; pings, then shutdown.
inline std::vector<ScenarioStep> ScenarioSteps(absl::string_view scenario) {
  if (scenario == "consensus") {
    return {{{.request_id = "consensus-1", .sequence_number = 1, .prompts = 1}},
            {{.request_id = "consensus-2",
              .sequence_number = 2,
              .prompts = 3,
              .seed = 7}}};
  }
  if (scenario == "fault") {
    return {{{.request_id = "fault-1", .sequence_number = 1, .prompts = 2}},
            {{.request_id = "fault-2", .sequence_number = 2, .prompts = 2}}};
  }
  if (scenario == "seed") {
    return {{{.request_id = "seed-256",
              .sequence_number = 1,
              .max_sequence_length = 256}},
            {{.request_id = "seed-512",
              .sequence_number = 2,
              .max_sequence_length = 512}}};
  }
  if (scenario == "cancel") {
    return {{{.request_id = "cancel-1", .sequence_number = 1, .steps = 4},
             /*cancel_after_step=*/0},
            {{.request_id = "cancel-2", .sequence_number = 2, .steps = 4}}};
  }
  if (scenario == "stall") {
    return {{{.request_id = "stall-1", .sequence_number = 1}},
            {{.request_id = "stall-2", .sequence_number = 2}}};
  }
  if (scenario == "dp_failure") {
    // One preview, after step 2.
    return {{{.request_id = "dp-failure-1",
              .sequence_number = 1,
              .prompts = 2,
              .steps = 4,
              .partial_images = 1}},
            {{.request_id = "dp-failure-2",
              .sequence_number = 2,
              .prompts = 2,
              .steps = 4,
              .partial_images = 1}}};
  }
  if (scenario == "kill") {
    return {{{.request_id = "kill-1", .sequence_number = 1, .prompts = 2}}};
  }
  return {};
}

}  // namespace ditserve::testing

#endif  // DITSERVE_TESTS_INTEGRATION_SCENARIOS_H_
