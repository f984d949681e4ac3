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

// The image tokens of one PipeFusion forward (a patch, or the whole image)
// that sequence-parallel rank `index` of `degree` computes under PipeFusion ×
// sequence parallelism. With shard = ceil(tokens / degree) the rank owns
// tokens [index × shard, min((index + 1) × shard, tokens)) (possibly none)
// and computes `shard` of them from `begin`: its own, moved back from the end
// when fewer remain. Every rank thus computes as many tokens (equal shapes
// for the collectives) and no padding enters the model; a token computed by
// two ranks comes out alike on both, and its owner's result is used.
struct PipeFusionShard {
  int begin = 0;
  int tokens = 0;
  int owned_begin = 0;
  int owned_end = 0;
};
PipeFusionShard PipeFusionShardOf(int tokens, int degree, int index);

// Offsets (count + 1 entries) splitting `items` into `count` contiguous runs
// whose sizes differ by at most one, larger runs first.
std::vector<int> EvenOffsets(int items, int count);

// The latent frames of a video of `num_frames` frames: the VAE's
// (num_frames - 1) / temporal_compression + 1, and those padded in front to
// whole temporal patches of `temporal_patch` frames, as the transformer and
// the scheduler see them (CogVideoX 1.5; the padding is dropped before
// decoding). 1 and 1 for an image.
struct LatentFrames {
  int unpadded = 1;
  int padded = 1;
};
LatentFrames LatentFramesOf(int num_frames, int temporal_compression,
                            int temporal_patch);

// Every shape a rank sizes a buffer from, computed from the user-facing
// fields of `config` (size, prompts, sequence length, guidance, parallel).
// Fails with INVALID_ARGUMENT naming the field when the request cannot be
// laid out (e.g. fewer patch rows than PipeFusion patches).
absl::StatusOr<v1::DerivedShapes> DeriveShapes(const v1::InputConfig& config,
                                               const ModelSpec& spec);

}  // namespace ditserve::config

#endif  // DITSERVE_CORE_CONFIG_DERIVED_SHAPES_H_
