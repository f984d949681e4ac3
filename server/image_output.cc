#include "server/image_output.h"

#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/engine/stage.h"
#include "core/io/image.h"

namespace ditserve::server {
namespace {

// Host byte order is little-endian on every platform LibTorch ships for.
std::string RawBytes(const at::Tensor& tensor) {
  const at::Tensor contiguous = tensor.contiguous();
  return std::string(static_cast<const char*>(contiguous.data_ptr()),
                     contiguous.numel() * contiguous.element_size());
}

absl::StatusOr<std::vector<v1::Image>> LatentImages(const at::Tensor& latents) {
  std::vector<v1::Image> images;
  const at::Tensor values = latents.to(torch::kCPU, torch::kFloat32);
  for (int64_t i = 0; i < values.size(0); ++i) {
    v1::Image image;
    image.set_data(RawBytes(values[i]));
    image.set_mime_type(kLatentMimeType);
    image.set_height(static_cast<int32_t>(values.size(2)));
    image.set_width(static_cast<int32_t>(values.size(3)));
    images.push_back(std::move(image));
  }
  return images;
}

absl::StatusOr<std::vector<v1::Image>> PixelImages(v1::OutputFormat format,
                                                   const at::Tensor& rgb) {
  std::vector<v1::Image> images;
  for (int64_t i = 0; i < rgb.size(0); ++i) {
    v1::Image image;
    if (format == v1::OUTPUT_FORMAT_RGB8) {
      image.set_data(RawBytes(rgb[i]));
      image.set_mime_type(kRgb8MimeType);
    } else {
      ASSIGN_OR_RETURN(std::string png, io::EncodePng(rgb[i]));
      image.set_data(std::move(png));
      image.set_mime_type(kPngMimeType);
    }
    image.set_height(static_cast<int32_t>(rgb.size(1)));
    image.set_width(static_cast<int32_t>(rgb.size(2)));
    images.push_back(std::move(image));
  }
  return images;
}

}  // namespace

OutputEncoder MakeImageOutput(engine::RankProgram& program) {
  return [&program](const v1::InputConfig& config, const at::Tensor& latents,
                    engine::StageTimings& timings)
             -> absl::StatusOr<std::vector<v1::Image>> {
    if (!latents.defined() || latents.dim() != 4 ||
        latents.size(0) != config.prompt_size()) {
      return absl::InternalError(absl::StrCat("rank 0 holds no latents of ",
                                              config.prompt_size(),
                                              " images after the gather"));
    }
    if (config.output_format() == v1::OUTPUT_FORMAT_LATENT_F32) {
      engine::ScopedStageTimer timer(timings, engine::Stage::kEncode);
      return LatentImages(latents);
    }
    ASSIGN_OR_RETURN(at::Tensor rgb, program.Decode(config, latents, timings));
    engine::ScopedStageTimer timer(timings, engine::Stage::kEncode);
    return PixelImages(config.output_format(), rgb);
  };
}

}  // namespace ditserve::server
