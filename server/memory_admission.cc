#include "server/memory_admission.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/base/status_macros.h"
#include "core/engine/family_registry.h"
#include "server/status_conversion.h"

namespace ditserve::server {
namespace {

// GiB with one decimal, or MiB below one GiB, so that small limits read too.
std::string Readable(int64_t bytes) {
  constexpr double kMiB = 1 << 20;
  constexpr double kGiB = 1 << 30;
  return bytes >= kGiB ? absl::StrFormat("%.1f GiB", bytes / kGiB)
                       : absl::StrFormat("%.0f MiB", bytes / kMiB);
}

// "1536x1536, 1 image" or "720x480, 49 frames, 2 videos".
std::string Size(const v1::InputConfig& config) {
  const int outputs = config.prompt_size();
  std::string size = absl::StrCat(config.width(), "x", config.height());
  if (config.num_frames() > 1) {
    return absl::StrCat(size, ", ", config.num_frames(), " frames, ", outputs,
                        outputs == 1 ? " video" : " videos");
  }
  return absl::StrCat(size, ", ", outputs, outputs == 1 ? " image" : " images");
}

absl::StatusOr<int64_t> EstimatedBytes(const v1::InputConfig& config,
                                       const config::ModelSpec& spec) {
  ASSIGN_OR_RETURN(const families::Family* family,
                   engine::FamilyFor(spec.defaults.name));
  return family->RequestBytes(config, spec);
}

}  // namespace

absl::Status CheckRequestMemory(const v1::InputConfig& config,
                                const ServedModel& model) {
  const int64_t limit = model.options.max_request_bytes;
  if (limit <= 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(const int64_t bytes, EstimatedBytes(config, model.spec));
  if (bytes <= limit) return absl::OkStatus();
  return MarkNotRetryable(absl::ResourceExhaustedError(
      absl::StrCat("request needs an estimated ", Readable(bytes), " (",
                   Size(config), "), above --max_request_bytes ", limit, " (",
                   Readable(limit), "); ask for fewer or smaller outputs")));
}

bool FitsRequestMemory(const v1::InputConfig& config,
                       const config::ModelSpec& spec, int64_t limit) {
  if (limit <= 0) return true;
  const absl::StatusOr<int64_t> bytes = EstimatedBytes(config, spec);
  return bytes.ok() && *bytes <= limit;
}

}  // namespace ditserve::server
