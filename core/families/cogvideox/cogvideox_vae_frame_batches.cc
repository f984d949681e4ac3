#include "core/families/cogvideox/cogvideox_vae_frame_batches.h"

#include <algorithm>

namespace ditserve::families {
namespace {

constexpr int64_t kLatentFramesPerBatch = 2;

}  // namespace

std::vector<FrameRange> DecodeFrameBatches(int64_t latent_frames) {
  const int64_t remaining = latent_frames % kLatentFramesPerBatch;
  const int64_t batches =
      std::max<int64_t>(latent_frames / kLatentFramesPerBatch, 1);
  std::vector<FrameRange> ranges;
  for (int64_t i = 0; i < batches; ++i) {
    ranges.push_back({kLatentFramesPerBatch * i + (i == 0 ? 0 : remaining),
                      kLatentFramesPerBatch * (i + 1) + remaining});
  }
  // A single latent frame: the first chunk's end overshoots.
  ranges.back().end = std::min(ranges.back().end, latent_frames);
  return ranges;
}

int64_t DecodedFrames(int64_t latent_frames, int64_t time_doublings) {
  const int64_t single = latent_frames % 2;
  return single + ((latent_frames - single) << time_doublings);
}

int64_t MostFramesPerDecoderPass(int64_t latent_frames,
                                 int64_t time_doublings) {
  int64_t most = 0;
  for (const FrameRange& batch : DecodeFrameBatches(latent_frames)) {
    most =
        std::max(most, DecodedFrames(batch.end - batch.begin, time_doublings));
  }
  return most;
}

}  // namespace ditserve::families
