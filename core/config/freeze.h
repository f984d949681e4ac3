#ifndef DITSERVE_CORE_CONFIG_FREEZE_H_
#define DITSERVE_CORE_CONFIG_FREEZE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "core/config/model_spec.h"
#include "core/config/server_options.h"
#include "ditserve/v1/generation.pb.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::config {

// GenerateRequest.output_quality, as libjpeg and libwebp count quality.
inline constexpr int kMinOutputQuality = 1;
inline constexpr int kMaxOutputQuality = 100;
inline constexpr int kDefaultOutputQuality = 90;

// GenerateRequest.partial_images, at most OpenAI's limit.
inline constexpr int kMaxPartialImages = 3;

// Whether `format` is lossy and so takes an output_quality: JPEG and WebP.
bool TakesOutputQuality(v1::OutputFormat format);

// The largest height or width a request may ask for, given the model's own
// limit on that side (ModelSpec::max_height or max_width, 0 for none): the
// lesser of it and --max_side_pixels. GetServerInfo reports it.
int MostSidePixels(int model_most, const ServerOptions& options);

// What the host decides about a request outside of its fields. Passing these
// in keeps Freeze a pure function.
struct FreezeContext {
  uint64_t sequence_number = 0;
  // Used when the request has no request_id.
  std::string generated_request_id;
  // First seed when the request has none (drawn once by the host).
  uint64_t drawn_seed = 0;
  // Absolute deadline, microseconds since the Unix epoch; 0 = none.
  int64_t deadline_unix_micros = 0;
};

// Turns a request into an InputConfig with every field explicit: omitted
// fields take the model family's defaults (model_defaults), one seed per
// image, the parallel snapshot and the derived shapes. Every field is
// checked; errors are INVALID_ARGUMENT (NOT_FOUND for an unknown model)
// naming the field, the value and what is allowed.
absl::StatusOr<v1::InputConfig> Freeze(const v1::GenerateRequest& request,
                                       const ModelSpec& spec,
                                       const ServerOptions& options,
                                       const v1::ParallelConfig& parallel,
                                       const FreezeContext& context);

}  // namespace ditserve::config

#endif  // DITSERVE_CORE_CONFIG_FREEZE_H_
