#include "server/partial_image_decoder.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/base/guarded.h"
#include "core/engine/stage_timings.h"
#include "server/request_batch.h"
#include "spdlog/spdlog.h"

namespace ditserve::server {

PartialImageDecoder::PartialImageDecoder(
    const v1::InputConfig& config,
    const std::vector<std::shared_ptr<Job>>& jobs,
    const std::vector<int>& prompt_counts, const OutputEncoder& encode,
    Metrics& metrics)
    : config_(config),
      jobs_(jobs),
      prompt_counts_(prompt_counts),
      encode_(encode),
      metrics_(metrics) {}

PartialImageDecoder::~PartialImageDecoder() { Wait(); }

void PartialImageDecoder::Decode(int step, at::Tensor latents) {
  const absl::Time handed_over = absl::Now();
  latest_ = std::thread([this, step, handed_over, latents = std::move(latents),
                         before = std::move(latest_)]() mutable {
    if (before.joinable()) before.join();
    const char* result = Report(step, latents);
    metrics_.CountPartialImage(result);
    if (std::string_view(result) == kPartialImageSent) {
      metrics_.ObservePartialImageDelay(
          absl::ToDoubleSeconds(absl::Now() - handed_over));
    }
  });
}

void PartialImageDecoder::Wait() {
  if (latest_.joinable()) latest_.join();
}

const char* PartialImageDecoder::Report(int step,
                                        const at::Tensor& latents) const {
  if (std::all_of(
          jobs_.begin(), jobs_.end(),
          [](const std::shared_ptr<Job>& job) { return job->finished(); })) {
    return kPartialImageSkipped;
  }
  // A preview's decode is not one of the run's stages.
  engine::StageTimings untimed;
  absl::StatusOr<std::vector<v1::Image>> images = base::Guarded(
      "partial image", [&] { return encode_(config_, latents, untimed); });
  v1::GenerateResponse merged;
  if (images.ok()) {
    for (v1::Image& image : *images) *merged.add_images() = std::move(image);
  }
  absl::StatusOr<std::vector<v1::GenerateResponse>> split =
      images.ok()
          ? SplitResponse(merged, prompt_counts_)
          : absl::StatusOr<std::vector<v1::GenerateResponse>>(images.status());
  if (!split.ok()) {
    spdlog::warn("request_id={} partial image after step {} failed: {}",
                 config_.request_id(), step, split.status().ToString());
    return kPartialImageFailed;
  }
  const auto& steps = config_.partial_image_steps();
  const auto index = static_cast<int>(
      std::find(steps.begin(), steps.end(), step) - steps.begin());
  for (size_t job = 0; job < jobs_.size(); ++job) {
    for (v1::Image& image : *(*split)[job].mutable_images()) {
      v1::GenerateStreamResponse event;
      v1::GenerateStreamResponse::PartialImage* partial =
          event.mutable_partial_image();
      partial->set_partial_image_index(index);
      partial->set_step(step);
      partial->set_total_bytes(static_cast<int64_t>(image.data().size()));
      *partial->mutable_image() = std::move(image);
      jobs_[job]->ReportEvent(std::move(event));
    }
  }
  return kPartialImageSent;
}

}  // namespace ditserve::server
