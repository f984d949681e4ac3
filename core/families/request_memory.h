#ifndef DITSERVE_CORE_FAMILIES_REQUEST_MEMORY_H_
#define DITSERVE_CORE_FAMILIES_REQUEST_MEMORY_H_

// The parts of a request's memory estimate (Family::RequestBytes): what one
// request adds to rank 0's resident memory at its peak, above the loaded
// model, from its frozen shapes and the model's widths. Each part errs high;
// tests/unit/families/request_memory_test.cc holds the measured peaks they
// were calibrated against.

#include <cstdint>

#include "core/config/model_spec.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::families {

// One transformer forward on rank 0: the float32 hidden states alive at once
// in a block, for every row it runs (its data-parallel group's prompts times
// its guidance branches) over the whole padded sequence, plus the attention
// scores (at most models::kMaxScoreBytes at once).
int64_t TransformerForwardBytes(const v1::InputConfig& config,
                                const config::ModelSpec& spec);

// Float32 activations a VAE decoder holds at once at full resolution, in
// tensors as wide as the level above (which up-samples its own width into
// full resolution: the interpolated input and its convolution) and as the
// last level (its ResNet blocks' inputs, norms, convolutions and sums).
struct FullResolutionActivations {
  int upsampled = 0;
  int last_level = 0;
};

// Decoding one output, `frames` frames at once (rank 0 decodes the outputs
// one after another): the decoder's full-resolution activations at the
// generated size, or with vae_tiling at one tile's, and the VAE's widths;
// with vae_tiling also the decoded tiles of two rows (every frame of a
// video: each tile decodes them all), which the blend keeps.
int64_t VaeDecodeBytes(const v1::InputConfig& config,
                       const config::ModelSpec& spec, int64_t frames,
                       const FullResolutionActivations& alive);

// The attention of an AutoencoderKL's mid-block over the latent pixels of
// the output, or with vae_tiling of one tile (at most
// models::kMaxScoreBytes of scores at once).
int64_t VaeAttentionBytes(const v1::InputConfig& config,
                          const config::ModelSpec& spec);

// The peak of a request whose transformer forward holds `forward` bytes and
// whose decode `decode`: a preview (partial_image_steps) decodes beside the
// denoising, so with previews the two add up; without, the decode follows
// the last forward.
int64_t ForwardAndDecodePeakBytes(const v1::InputConfig& config,
                                  int64_t forward, int64_t decode);

// The decoded outputs rank 0 holds until it answers: every frame of every
// output as float32 and RGB8 pixels, and their encoding.
int64_t OutputBytes(const v1::InputConfig& config);

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_REQUEST_MEMORY_H_
