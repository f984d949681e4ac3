#ifndef DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_VAE_FRAME_BATCHES_H_
#define DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_VAE_FRAME_BATCHES_H_

#include <cstdint>
#include <vector>

namespace ditserve::families {

// Latent frames [begin, end).
struct FrameRange {
  int64_t begin = 0;
  int64_t end = 0;
};

// The chunks AutoencoderKLCogVideoX._decode runs the decoder on
// (num_latent_frames_batch_size = 2): pairs of latent frames, the first chunk
// taking three when the count is odd (5 -> [0, 3), [3, 5)). The VAE was
// trained on these chunk lengths, so they are not a tuning knob.
std::vector<FrameRange> DecodeFrameBatches(int64_t latent_frames);

// Output frames of one decoder pass over `latent_frames` frames with
// `time_doublings` temporally up-sampling blocks: every frame is doubled that
// often, except the first frame of an odd count.
int64_t DecodedFrames(int64_t latent_frames, int64_t time_doublings);

// The most output frames one decoder pass makes while decoding
// `latent_frames` frames in DecodeFrameBatches: how many frames the
// decoder's full-resolution activations hold at once.
int64_t MostFramesPerDecoderPass(int64_t latent_frames, int64_t time_doublings);

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_VAE_FRAME_BATCHES_H_
