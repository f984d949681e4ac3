#ifndef DITSERVE_CORE_CONFIG_DERIVED_SHAPES_H_
#define DITSERVE_CORE_CONFIG_DERIVED_SHAPES_H_

#include <vector>

#include "absl/status/statusor.h"
#include "core/config/model_spec.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::config {

// A sequence of `tokens` split evenly over `degree` ranks after padding.
struct SequenceSplit {
  int padded_tokens = 0;
  int padding_tokens = 0;
  int shard_tokens = 0;
};
SequenceSplit SplitSequence(int tokens, int degree);

// Offsets (count + 1 entries) splitting `items` into `count` contiguous runs
// whose sizes differ by at most one, larger runs first.
std::vector<int> EvenOffsets(int items, int count);

// Every shape a rank sizes a buffer from, computed from the user-facing
// fields of `config` (size, prompts, sequence length, guidance, parallel).
// Fails with INVALID_ARGUMENT naming the field when the request cannot be
// laid out (e.g. fewer patch rows than PipeFusion patches).
absl::StatusOr<v1::DerivedShapes> DeriveShapes(const v1::InputConfig& config,
                                               const ModelSpec& spec);

}  // namespace ditserve::config

#endif  // DITSERVE_CORE_CONFIG_DERIVED_SHAPES_H_
