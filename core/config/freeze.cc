#include "core/config/freeze.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/base/status_macros.h"
#include "core/base/utf8.h"
#include "core/config/derived_shapes.h"
#include "core/config/field_error.h"
#include "core/config/model_defaults.h"

namespace ditserve::config {
namespace {

// The frame rates a video is encoded at.
constexpr int kMaxFps = 120;
// libwebp's WEBP_MAX_DIMENSION: a WebP stores each side in 14 bits.
constexpr int kMaxWebpSide = 16383;
// Browsers show an animation frame of 10 ms or less (Blink; WebKit: under
// 11 ms) for 100 ms: at 91 fps and above some of WebP's whole-millisecond
// frames are 10 ms, and the video plays up to ten times too slowly.
constexpr int kMaxWebpFps = 90;

absl::Status CheckModel(absl::string_view model,
                        const ModelDefaults& defaults) {
  if (model.empty() || model == defaults.name) return absl::OkStatus();
  return WithFields(absl::NotFoundError(
                        absl::StrCat("model \"", base::Shortened(model),
                                     "\" is not served here; this server "
                                     "runs \"",
                                     defaults.name, "\" (or leave it empty)")),
                    {"model"});
}

absl::Status CheckText(absl::string_view field, int index,
                       absl::string_view text, int max_bytes) {
  if (absl::Status utf8 =
          base::CheckUtf8(absl::StrCat(field, "[", index, "]"), text);
      !utf8.ok()) {
    return WithFields(std::move(utf8), {field});
  }
  if (text.size() > static_cast<size_t>(max_bytes)) {
    return InvalidField(field,
                        absl::StrCat(field, "[", index, "] has ", text.size(),
                                     " bytes; the limit is ", max_bytes));
  }
  return absl::OkStatus();
}

absl::Status CheckPrompts(const v1::GenerateRequest& request,
                          const ModelDefaults& defaults,
                          const ServerOptions& options) {
  const int count = request.prompt_size();
  if (count < 1 || count > options.max_batch) {
    return InvalidField(
        "prompt", absl::StrCat("prompt has ", count, " entries; allowed 1 to ",
                               options.max_batch, " (one image per prompt)"));
  }
  const int negatives = request.negative_prompt_size();
  if (negatives != 0 && !defaults.uses_classifier_free_guidance) {
    return InvalidField(
        "negative_prompt",
        absl::StrCat("negative_prompt is not used by ", defaults.name,
                     " (no classifier-free guidance); leave it empty"));
  }
  if (negatives > 1 && negatives != count) {
    return InvalidField(
        "negative_prompt",
        absl::StrCat("negative_prompt has ", negatives,
                     " entries; give none, one for every prompt, or one per "
                     "prompt (",
                     count, ")"));
  }
  for (int i = 0; i < count; ++i) {
    RETURN_IF_ERROR(
        CheckText("prompt", i, request.prompt(i), options.max_prompt_bytes));
  }
  for (int i = 0; i < negatives; ++i) {
    RETURN_IF_ERROR(CheckText("negative_prompt", i, request.negative_prompt(i),
                              options.max_prompt_bytes));
  }
  return absl::OkStatus();
}

// How far from a refused step count NearestTakenSteps looks on each side:
// each probe builds a scheduler, and the counts a spacing refuses come
// alone or in pairs (121 and 122 of 1000).
constexpr int kMostStepProbes = 64;

// "; the nearest step counts that work: 60 and 62": the counts nearest
// `steps` on either side, within 1..`most` and kMostStepProbes, that `check`
// takes; empty when none does.
std::string NearestTakenSteps(const std::function<absl::Status(int)>& check,
                              int steps, int most) {
  std::vector<std::string> nearest;
  for (int below = steps - 1; below >= std::max(1, steps - kMostStepProbes);
       --below) {
    if (check(below).ok()) {
      nearest.push_back(absl::StrCat(below));
      break;
    }
  }
  for (int above = steps + 1; above <= std::min(most, steps + kMostStepProbes);
       ++above) {
    if (check(above).ok()) {
      nearest.push_back(absl::StrCat(above));
      break;
    }
  }
  if (nearest.empty()) return "";
  return absl::StrCat("; the nearest step counts that work: ",
                      absl::StrJoin(nearest, " and "));
}

// `binned`: resolution binning generates a size of its table and resizes
// the image to the one asked for, which may then be any size, as in
// diffusers.
// `model_most`: the model's own limit on this side, 0 for none.
absl::Status CheckSide(absl::string_view field, int value, int model_most,
                       const ModelSpec& spec, const ServerOptions& options,
                       bool binned) {
  const int multiple = binned ? 1 : spec.size_multiple();
  const int most = MostSidePixels(model_most, options);
  const bool model_limits = most < options.max_side_pixels;
  if (value < multiple || value > most) {
    return InvalidField(
        field,
        absl::StrCat(
            field, " ", value, " is out of range; allowed ", multiple, " to ",
            most, " pixels",
            model_limits ? " (the most the model's positions cover)" : ""));
  }
  if (value % multiple != 0) {
    return InvalidField(
        field, absl::StrCat(field, " ", value, " is not a multiple of ",
                            multiple, " (VAE scale ", spec.vae_scale_factor,
                            " × patch ", spec.patch_size, ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckRequestId(absl::string_view id,
                            const ServerOptions& options) {
  if (id.size() > static_cast<size_t>(options.max_request_id_chars)) {
    return InvalidField(
        "request_id",
        absl::StrCat("request_id has ", id.size(), " characters; the limit is ",
                     options.max_request_id_chars));
  }
  for (const char c : id) {
    if (c < 0x21 || c > 0x7e) {
      return InvalidField(
          "request_id",
          "request_id may only hold printable ASCII characters without "
          "spaces");
    }
  }
  return absl::OkStatus();
}

// Frames and frame rate: image models take one frame and no fps; video
// models frame_step × N + 1 frames, within the frame and pixel-frame limits.
absl::Status FreezeFrames(const v1::GenerateRequest& request,
                          const ModelDefaults& defaults,
                          const ServerOptions& options,
                          v1::InputConfig& config) {
  const int frames =
      request.has_num_frames() ? request.num_frames() : defaults.num_frames;
  if (!defaults.video()) {
    if (frames != 1) {
      return InvalidField(
          "num_frames", absl::StrCat("num_frames ", frames,
                                     " is not allowed: ", defaults.name,
                                     " makes images; use 1 or leave it unset"));
    }
    if (request.has_fps()) {
      return InvalidField("fps",
                          absl::StrCat("fps is not used by ", defaults.name,
                                       " (an image model); leave it unset"));
    }
    config.set_num_frames(1);
    config.set_fps(0);
    return absl::OkStatus();
  }
  if (frames < 1 || frames > options.max_frames ||
      (frames - 1) % defaults.frame_step != 0) {
    return InvalidField(
        "num_frames",
        absl::StrCat("num_frames ", frames, " is not allowed for ",
                     defaults.name, "; allowed ", defaults.frame_step,
                     " × N + 1 frames (1, ", defaults.frame_step + 1, ", ",
                     2 * defaults.frame_step + 1, ", ...) up to ",
                     options.max_frames));
  }
  const int64_t pixel_frames =
      int64_t{config.height()} * config.width() * frames;
  if (pixel_frames > options.max_video_pixels) {
    return WithFields(
        absl::InvalidArgumentError(
            absl::StrCat("height × width × num_frames ", config.height(), " × ",
                         config.width(), " × ", frames, " = ", pixel_frames,
                         " exceeds the limit of ", options.max_video_pixels)),
        {"num_frames", "height", "width"});
  }
  const int fps = request.has_fps() ? request.fps() : defaults.fps;
  if (fps < 1 || fps > kMaxFps) {
    return InvalidField(
        "fps",
        absl::StrCat("fps ", fps, " is out of range; allowed 1 to ", kMaxFps));
  }
  config.set_num_frames(frames);
  config.set_fps(fps);
  return absl::OkStatus();
}

absl::StatusOr<v1::OutputFormat> FreezeOutputFormat(
    v1::OutputFormat format, const ModelDefaults& defaults) {
  if (!v1::OutputFormat_IsValid(format)) {
    return InvalidField(
        "output_format",
        absl::StrCat("output_format ", format,
                     " is unknown; use OUTPUT_FORMAT_PNG, OUTPUT_FORMAT_JPEG, "
                     "OUTPUT_FORMAT_WEBP, OUTPUT_FORMAT_RGB8, "
                     "OUTPUT_FORMAT_LATENT_F32 or "
                     "(video models) OUTPUT_FORMAT_MP4"));
  }
  if (format == v1::OUTPUT_FORMAT_MP4 && !defaults.video()) {
    return InvalidField(
        "output_format",
        absl::StrCat(
            "output_format OUTPUT_FORMAT_MP4 is for video models; ",
            defaults.name,
            " makes images: use OUTPUT_FORMAT_PNG, OUTPUT_FORMAT_JPEG, "
            "OUTPUT_FORMAT_WEBP, OUTPUT_FORMAT_RGB8 or "
            "OUTPUT_FORMAT_LATENT_F32"));
  }
  return format == v1::OUTPUT_FORMAT_UNSPECIFIED ? v1::OUTPUT_FORMAT_PNG
                                                 : format;
}

// The format and, for the lossy ones, the quality, into `config`, whose size
// is frozen already.
absl::Status FreezeOutput(const v1::GenerateRequest& request,
                          const ModelDefaults& defaults,
                          v1::InputConfig& config) {
  ASSIGN_OR_RETURN(const v1::OutputFormat format,
                   FreezeOutputFormat(request.output_format(), defaults));
  config.set_output_format(format);
  if (!TakesOutputQuality(format)) {
    if (request.has_output_quality()) {
      return InvalidField(
          "output_quality",
          absl::StrCat("output_quality is for OUTPUT_FORMAT_JPEG and "
                       "OUTPUT_FORMAT_WEBP; "
                       "output_format is ",
                       v1::OutputFormat_Name(format),
                       ": leave output_quality unset"));
    }
    return absl::OkStatus();
  }
  const int quality = request.has_output_quality() ? request.output_quality()
                                                   : kDefaultOutputQuality;
  if (quality < kMinOutputQuality || quality > kMaxOutputQuality) {
    return InvalidField(
        "output_quality",
        absl::StrCat("output_quality ", quality, " is out of range; allowed ",
                     kMinOutputQuality, " to ", kMaxOutputQuality));
  }
  if (format == v1::OUTPUT_FORMAT_WEBP &&
      std::max(config.height(), config.width()) > kMaxWebpSide) {
    return WithFields(
        absl::InvalidArgumentError(absl::StrCat(
            "output_format OUTPUT_FORMAT_WEBP holds at most ", kMaxWebpSide,
            " pixels a side; height × width is ", config.height(), " × ",
            config.width(), ": use OUTPUT_FORMAT_JPEG or OUTPUT_FORMAT_PNG")),
        {"output_format", "height", "width"});
  }
  if (format == v1::OUTPUT_FORMAT_WEBP && config.num_frames() > 1 &&
      config.fps() > kMaxWebpFps) {
    return WithFields(
        absl::InvalidArgumentError(
            absl::StrCat("fps ", config.fps(),
                         " is too fast for an animated WebP (output_format "
                         "OUTPUT_FORMAT_WEBP), which browsers play at most at ",
                         kMaxWebpFps,
                         " fps (they hold a frame of 10 ms or less for "
                         "100 ms): use fps up to ",
                         kMaxWebpFps, " or OUTPUT_FORMAT_MP4")),
        {"fps", "output_format"});
  }
  config.set_output_quality(quality);
  return absl::OkStatus();
}

// partial_images spread evenly over the steps: the i-th (1-based) of k
// previews after step ⌊steps × i / (k + 1)⌋, so they come at a steady pace
// and none after the last step, whose image is the result.
absl::Status FreezePartialImages(const v1::GenerateRequest& request,
                                 v1::InputConfig& config) {
  const int partial = request.partial_images();
  if (partial == 0) return absl::OkStatus();
  const int steps = config.num_inference_steps();
  const int most = std::min(kMaxPartialImages, steps - 1);
  if (partial < 0 || partial > most) {
    return InvalidField(
        "partial_images",
        absl::StrCat(
            "partial_images ", partial, " is out of range; allowed 0 to ", most,
            most < kMaxPartialImages
                ? absl::StrCat(" (fewer than num_inference_steps ", steps, ")")
                : ""));
  }
  for (int i = 1; i <= partial; ++i) {
    config.add_partial_image_steps(steps * i / (partial + 1));
  }
  return absl::OkStatus();
}

}  // namespace

bool TakesOutputQuality(v1::OutputFormat format) {
  return format == v1::OUTPUT_FORMAT_JPEG || format == v1::OUTPUT_FORMAT_WEBP;
}

int MostSidePixels(int model_most, const ServerOptions& options) {
  return model_most > 0 ? std::min(model_most, options.max_side_pixels)
                        : options.max_side_pixels;
}

absl::StatusOr<v1::InputConfig> Freeze(const v1::GenerateRequest& request,
                                       const ModelSpec& spec,
                                       const ServerOptions& options,
                                       const v1::ParallelConfig& parallel,
                                       const FreezeContext& context) {
  const ModelDefaults& defaults = spec.defaults;
  RETURN_IF_ERROR(CheckModel(request.model(), defaults));
  RETURN_IF_ERROR(CheckPrompts(request, defaults, options));
  RETURN_IF_ERROR(CheckRequestId(request.request_id(), options));

  v1::InputConfig config;
  config.set_sequence_number(context.sequence_number);
  config.set_request_id(request.request_id().empty()
                            ? context.generated_request_id
                            : request.request_id());
  config.set_model(std::string(defaults.name));
  config.set_priority(request.priority());
  *config.mutable_prompt() = request.prompt();
  if (defaults.uses_classifier_free_guidance) {
    // One negative prompt applies to every prompt, as in diffusers.
    const int negatives = request.negative_prompt_size();
    for (int i = 0; i < request.prompt_size(); ++i) {
      config.add_negative_prompt(
          negatives == 0 ? std::string()
                         : request.negative_prompt(negatives == 1 ? 0 : i));
    }
  }

  if (request.has_use_resolution_binning() &&
      request.use_resolution_binning() && !defaults.use_resolution_binning) {
    return InvalidField(
        "use_resolution_binning",
        absl::StrCat("use_resolution_binning is not available for ",
                     defaults.name,
                     " (it has no resolution-binning table; leave it unset "
                     "or false)"));
  }
  config.set_use_resolution_binning(request.has_use_resolution_binning()
                                        ? request.use_resolution_binning()
                                        : defaults.use_resolution_binning);

  config.set_height(request.has_height() ? request.height() : defaults.height);
  config.set_width(request.has_width() ? request.width() : defaults.width);
  RETURN_IF_ERROR(CheckSide("height", config.height(), spec.max_height, spec,
                            options, config.use_resolution_binning()));
  RETURN_IF_ERROR(CheckSide("width", config.width(), spec.max_width, spec,
                            options, config.use_resolution_binning()));
  const int64_t pixels = int64_t{config.height()} * config.width();
  if (pixels > options.max_pixels) {
    return WithFields(
        absl::InvalidArgumentError(absl::StrCat(
            "height × width ", config.height(), " × ", config.width(), " = ",
            pixels, " pixels exceeds the limit of ", options.max_pixels)),
        {"height", "width"});
  }
  RETURN_IF_ERROR(FreezeFrames(request, defaults, options, config));

  config.set_num_inference_steps(request.has_num_inference_steps()
                                     ? request.num_inference_steps()
                                     : defaults.num_inference_steps);
  if (config.num_inference_steps() < 1 ||
      config.num_inference_steps() > options.max_inference_steps) {
    return InvalidField(
        "num_inference_steps",
        absl::StrCat("num_inference_steps ", config.num_inference_steps(),
                     " is out of range; allowed 1 to ",
                     options.max_inference_steps));
  }
  if (spec.check_steps) {
    if (absl::Status steps = spec.check_steps(config.num_inference_steps());
        !steps.ok()) {
      return InvalidField(
          "num_inference_steps",
          absl::StrCat(
              steps.message(),
              NearestTakenSteps(spec.check_steps, config.num_inference_steps(),
                                options.max_inference_steps)));
    }
  }

  config.set_guidance_scale(request.has_guidance_scale()
                                ? request.guidance_scale()
                                : defaults.guidance_scale);
  if (!std::isfinite(config.guidance_scale()) ||
      config.guidance_scale() < options.min_guidance_scale ||
      config.guidance_scale() > options.max_guidance_scale) {
    return InvalidField(
        "guidance_scale",
        absl::StrCat("guidance_scale ", config.guidance_scale(),
                     " is not allowed; use a finite value from ",
                     options.min_guidance_scale, " to ",
                     options.max_guidance_scale));
  }
  // diffusers enables classifier-free guidance only above 1.
  config.set_do_classifier_free_guidance(
      defaults.uses_classifier_free_guidance && config.guidance_scale() > 1.0F);
  config.set_use_guidance_embedding(defaults.uses_guidance_embedding);
  if (request.use_dynamic_cfg() && !defaults.supports_dynamic_cfg) {
    return InvalidField(
        "use_dynamic_cfg",
        absl::StrCat("use_dynamic_cfg is not available for ", defaults.name,
                     " (its pipeline has no dynamic guidance); leave it unset "
                     "or false"));
  }
  config.set_use_dynamic_cfg(request.use_dynamic_cfg());
  if (request.vae_tiling() && spec.vae_tile_height == 0) {
    return InvalidField(
        "vae_tiling",
        absl::StrCat("vae_tiling is not available for ", defaults.name, ": ",
                     spec.vae_tiling_refusal, "; leave it unset or false"));
  }
  config.set_vae_tiling(request.vae_tiling());

  const uint64_t first_seed =
      request.has_seed() ? request.seed() : context.drawn_seed;
  const auto images = static_cast<uint64_t>(request.prompt_size());
  if (first_seed > std::numeric_limits<uint64_t>::max() - (images - 1)) {
    return InvalidField(
        "seed",
        absl::StrCat("seed ", first_seed, " leaves no room for ", images,
                     " consecutive per-image seeds; allowed 0 to ",
                     std::numeric_limits<uint64_t>::max() - (images - 1)));
  }
  for (uint64_t i = 0; i < images; ++i) config.add_seeds(first_seed + i);

  config.set_max_sequence_length(request.has_max_sequence_length()
                                     ? request.max_sequence_length()
                                     : defaults.max_sequence_length);
  if (defaults.fixed_sequence_length &&
      config.max_sequence_length() != defaults.max_sequence_length) {
    return InvalidField(
        "max_sequence_length",
        absl::StrCat("max_sequence_length ", config.max_sequence_length(),
                     " is not allowed for ", defaults.name, "; it is fixed at ",
                     defaults.max_sequence_length, " (leave it unset)"));
  }
  if (config.max_sequence_length() < 1 ||
      config.max_sequence_length() > defaults.max_sequence_length_limit) {
    return InvalidField(
        "max_sequence_length",
        absl::StrCat("max_sequence_length ", config.max_sequence_length(),
                     " is out of range; allowed 1 to ",
                     defaults.max_sequence_length_limit, " for ",
                     defaults.name));
  }

  config.set_scheduler(defaults.scheduler);
  config.set_scheduler_shift(defaults.scheduler_shift);
  config.set_scheduler_dynamic_shift(defaults.scheduler_dynamic_shift);

  RETURN_IF_ERROR(FreezeOutput(request, defaults, config));
  RETURN_IF_ERROR(FreezePartialImages(request, config));
  config.set_deadline_unix_micros(context.deadline_unix_micros);
  *config.mutable_parallel() = parallel;

  ASSIGN_OR_RETURN(v1::DerivedShapes shapes, DeriveShapes(config, spec));
  // Resolution binning may generate a larger image than the one asked for
  // (1024 × 4096 for 256 × 1024 on the 2K table): the limits hold for it.
  const int generated_height = shapes.generated_height();
  const int generated_width = shapes.generated_width();
  if (std::max(generated_height, generated_width) > options.max_side_pixels ||
      int64_t{generated_height} * generated_width > options.max_pixels) {
    return InvalidField(
        "use_resolution_binning",
        absl::StrCat("use_resolution_binning generates ", generated_height,
                     " × ", generated_width, " for ", config.height(), " × ",
                     config.width(), ", over the limits of ",
                     options.max_side_pixels, " pixels a side and ",
                     options.max_pixels,
                     " in all; request an aspect ratio nearer square or "
                     "use_resolution_binning false"));
  }
  *config.mutable_shapes() = std::move(shapes);
  return config;
}

}  // namespace ditserve::config
