#include "server/image_output.h"

#include <torch/torch.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "core/engine/buffer_plan.h"
#include "core/engine/stage.h"
#include "core/io/image.h"
#include "core/video/jpeg_encoder.h"
#include "core/video/mp4_encoder.h"
#include "core/video/rgb_video.h"
#include "core/video/webp_encoder.h"
#include "server/mime_types.h"

namespace ditserve::server {
namespace {

// Host byte order is little-endian on every platform LibTorch ships for.
std::string RawBytes(const at::Tensor& tensor) {
  const at::Tensor contiguous = tensor.contiguous();
  return std::string(static_cast<const char*>(contiguous.data_ptr()),
                     contiguous.numel() * contiguous.element_size());
}

v1::Image Output(std::string data, const char* mime_type, int64_t height,
                 int64_t width, int64_t frames, int prompt) {
  v1::Image image;
  image.set_data(std::move(data));
  image.set_mime_type(mime_type);
  image.set_height(static_cast<int32_t>(height));
  image.set_width(static_cast<int32_t>(width));
  image.set_num_frames(static_cast<int32_t>(frames));
  image.set_prompt_index(prompt);
  return image;
}

// Each prompt's latents [..., h, w] as they are: a video's with its frames.
std::vector<v1::Image> LatentOutputs(const v1::InputConfig& config,
                                     const at::Tensor& latents) {
  std::vector<v1::Image> images;
  const at::Tensor values = latents.to(torch::kCPU, torch::kFloat32);
  const int64_t frames =
      config.shapes().image_latent_shape_size() == 4 ? values.size(1) : 1;
  for (int64_t i = 0; i < values.size(0); ++i) {
    images.push_back(Output(RawBytes(values[i]), kLatentMimeType,
                            values.size(-2), values.size(-1), frames,
                            static_cast<int>(i)));
  }
  return images;
}

// Frame `index` of prompt `prompt`'s output [H, W, 3] as a file of its own:
// PNG or JPEG.
absl::StatusOr<v1::Image> FrameOutput(const v1::InputConfig& config,
                                      const at::Tensor& frame, int prompt,
                                      int64_t index) {
  const int64_t height = frame.size(0);
  const int64_t width = frame.size(1);
  std::string data;
  const char* mime_type = kPngMimeType;
  if (config.output_format() == v1::OUTPUT_FORMAT_JPEG) {
    const at::Tensor pixels = frame.contiguous();
    ASSIGN_OR_RETURN(
        data,
        video::EncodeJpeg(video::RgbVideo{.data = pixels.data_ptr<uint8_t>(),
                                          .frames = 1,
                                          .height = static_cast<int>(height),
                                          .width = static_cast<int>(width)},
                          config.output_quality()));
    mime_type = kJpegMimeType;
  } else {
    ASSIGN_OR_RETURN(data, io::EncodePng(frame));
  }
  v1::Image image =
      Output(std::move(data), mime_type, height, width, 1, prompt);
  image.set_frame_index(static_cast<int32_t>(index));
  return image;
}

// `rgb` [prompts, H, W, 3] of an image model, [prompts, F, H, W, 3] of a
// video model, in the config's format.
absl::StatusOr<std::vector<v1::Image>> PixelOutputs(
    const v1::InputConfig& config, const at::Tensor& rgb) {
  const bool video = rgb.dim() == 5;
  const at::Tensor videos = video ? rgb : rgb.unsqueeze(1);
  const int64_t frames = videos.size(1);
  const int64_t height = videos.size(2);
  const int64_t width = videos.size(3);
  std::vector<v1::Image> images;
  for (int64_t i = 0; i < videos.size(0); ++i) {
    const int prompt = static_cast<int>(i);
    const at::Tensor pixels = videos[i].contiguous();
    const video::RgbVideo whole{.data = pixels.data_ptr<uint8_t>(),
                                .frames = static_cast<int>(frames),
                                .height = static_cast<int>(height),
                                .width = static_cast<int>(width)};
    switch (config.output_format()) {
      case v1::OUTPUT_FORMAT_RGB8:
        images.push_back(Output(RawBytes(pixels), kRgb8MimeType, height, width,
                                frames, prompt));
        break;
      case v1::OUTPUT_FORMAT_MP4: {
        ASSIGN_OR_RETURN(std::string mp4,
                         video::EncodeMp4(whole, config.fps()));
        images.push_back(Output(std::move(mp4), kMp4MimeType, height, width,
                                frames, prompt));
        break;
      }
      case v1::OUTPUT_FORMAT_WEBP: {
        // An image model's config has no fps; one frame needs none.
        ASSIGN_OR_RETURN(std::string webp,
                         video::EncodeWebp(whole, std::max(config.fps(), 1),
                                           config.output_quality()));
        images.push_back(Output(std::move(webp), kWebpMimeType, height, width,
                                frames, prompt));
        break;
      }
      default:
        for (int64_t frame = 0; frame < frames; ++frame) {
          ASSIGN_OR_RETURN(v1::Image image,
                           FrameOutput(config, pixels[frame], prompt, frame));
          images.push_back(std::move(image));
        }
    }
  }
  return images;
}

absl::StatusOr<std::vector<v1::Image>> EncodeOutputs(
    engine::RankProgram& program, const v1::InputConfig& config,
    const at::Tensor& latents, engine::StageTimings& timings) {
  const std::vector<int64_t> expected =
      engine::LatentsShape(config.shapes(), {config.prompt_size()});
  if (!latents.defined() || latents.sizes() != expected) {
    return absl::InternalError(absl::StrCat(
        "rank 0 holds no latents ", engine::ShapeString(expected), " of ",
        config.prompt_size(), " outputs after the gather"));
  }
  if (config.output_format() == v1::OUTPUT_FORMAT_LATENT_F32) {
    engine::ScopedStageTimer timer(timings, engine::Stage::kEncode);
    return LatentOutputs(config, latents);
  }
  ASSIGN_OR_RETURN(at::Tensor rgb, program.Decode(config, latents, timings));
  engine::ScopedStageTimer timer(timings, engine::Stage::kEncode);
  return PixelOutputs(config, rgb);
}

}  // namespace

OutputEncoder MakeImageOutput(engine::RankProgram& program) {
  return [&program](const v1::InputConfig& config, const at::Tensor& latents,
                    engine::StageTimings& timings) {
    // On the host's run thread, which nothing above catches.
    return base::Guarded("decoding and encoding the outputs", [&] {
      return EncodeOutputs(program, config, latents, timings);
    });
  };
}

}  // namespace ditserve::server
