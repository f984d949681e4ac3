#include "server/partial_image_decoder.h"

#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>

#include <algorithm>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/base/guarded.h"
#include "core/base/monotonic_clock.h"
#include "core/engine/stage_timings.h"
#include "server/request_batch.h"
#include "spdlog/spdlog.h"

namespace ditserve::server {
namespace {

// Which of `config`'s previews comes after `step`; -1 if none does.
int PreviewIndex(const v1::InputConfig& config, int step) {
  const auto& steps = config.partial_image_steps();
  const auto found = std::find(steps.begin(), steps.end(), step);
  return found == steps.end() ? -1 : static_cast<int>(found - steps.begin());
}

}  // namespace

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
  const absl::Time handed_over = base::MonotonicNow();
  latest_ = std::thread([this, step, handed_over, latents = std::move(latents),
                         before = std::move(latest_)]() mutable {
    if (before.joinable()) before.join();
    // Nothing may escape this thread: that would end the host. Checking
    // the latents touches the GPU the run is using, where an error from the
    // run can surface.
    absl::StatusOr<const char*> reported = base::Guarded("partial image", [&] {
      // CUDA's current device is per thread; this one starts on GPU 0.
      c10::OptionalDeviceGuard on_device;
      if (latents.is_cuda()) on_device.reset_device(latents.device());
      return Report(step, latents);
    });
    if (!reported.ok()) {
      spdlog::warn("request_id={} partial image after step {} failed: {}",
                   config_.request_id(), step, reported.status().ToString());
    }
    const char* result = reported.value_or(kPartialImageFailed);
    metrics_.CountPartialImage(result);
    if (std::string_view(result) == kPartialImageSent) {
      metrics_.ObservePartialImageDelay(
          absl::ToDoubleSeconds(base::MonotonicNow() - handed_over));
    }
  });
}

void PartialImageDecoder::Wait() {
  if (latest_.joinable()) latest_.join();
}

const char* PartialImageDecoder::Report(int step,
                                        const at::Tensor& latents) const {
  // The requests that asked for a preview after `step` and still wait for
  // their images. Only their prompts' rows are decoded: a merged run takes
  // the union of its requests' preview steps.
  std::vector<size_t> wanting;
  std::vector<int> wanting_counts;
  std::vector<int64_t> rows;
  v1::InputConfig wanted = config_;
  wanted.clear_prompt();
  wanted.clear_negative_prompt();
  wanted.clear_seeds();
  int64_t first_row = 0;
  for (size_t job = 0; job < jobs_.size(); ++job) {
    const v1::InputConfig& own = jobs_[job]->config();
    if (!jobs_[job]->finished() && PreviewIndex(own, step) >= 0) {
      wanting.push_back(job);
      wanting_counts.push_back(prompt_counts_[job]);
      for (int prompt = 0; prompt < prompt_counts_[job]; ++prompt) {
        rows.push_back(first_row + prompt);
      }
      wanted.mutable_prompt()->MergeFrom(own.prompt());
      wanted.mutable_negative_prompt()->MergeFrom(own.negative_prompt());
      wanted.mutable_seeds()->MergeFrom(own.seeds());
    }
    first_row += prompt_counts_[job];
  }
  if (wanting.empty()) return kPartialImageSkipped;
  // A dp group that failed mid-run sends NaN latents for its prompts until
  // the run ends (engine::RunDpGroup); the run fails then, and a preview
  // decoded from them would show nothing the client asked for.
  if (!at::isfinite(latents).all().item<bool>()) {
    spdlog::warn(
        "request_id={} partial image after step {} not sent: its latents are "
        "not finite",
        config_.request_id(), step);
    return kPartialImageFailed;
  }
  // A preview's decode is not one of the run's stages.
  engine::StageTimings untimed;
  absl::StatusOr<std::vector<v1::Image>> images =
      base::Guarded("partial image", [&] {
        if (wanting.size() == jobs_.size()) {
          return encode_(config_, latents, untimed);
        }
        // index_select wants its index on the latents' device (a GPU's).
        const at::Tensor selected = latents.index_select(
            0, at::tensor(rows, latents.options().dtype(at::kLong)));
        return encode_(wanted, selected, untimed);
      });
  v1::GenerateResponse merged;
  if (images.ok()) {
    for (v1::Image& image : *images) *merged.add_images() = std::move(image);
  }
  absl::StatusOr<std::vector<v1::GenerateResponse>> split =
      images.ok()
          ? SplitResponse(merged, wanting_counts)
          : absl::StatusOr<std::vector<v1::GenerateResponse>>(images.status());
  if (!split.ok()) {
    spdlog::warn("request_id={} partial image after step {} failed: {}",
                 config_.request_id(), step, split.status().ToString());
    return kPartialImageFailed;
  }
  for (size_t i = 0; i < wanting.size(); ++i) {
    Job& job = *jobs_[wanting[i]];
    const int index = PreviewIndex(job.config(), step);
    for (v1::Image& image : *(*split)[i].mutable_images()) {
      v1::GenerateStreamResponse event;
      v1::GenerateStreamResponse::PartialImage* partial =
          event.mutable_partial_image();
      partial->set_partial_image_index(index);
      partial->set_step(step);
      partial->set_total_bytes(static_cast<int64_t>(image.data().size()));
      *partial->mutable_image() = std::move(image);
      job.ReportEvent(std::move(event));
    }
  }
  return kPartialImageSent;
}

}  // namespace ditserve::server
