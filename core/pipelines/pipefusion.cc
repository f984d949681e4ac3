#include "core/pipelines/pipefusion.h"

#include <torch/torch.h>

#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/parallel/collective_error.h"

namespace ditserve::pipelines {
namespace {

// Tags keep the two streams and the prediction (of each patch) apart on one
// pair of ranks.
constexpr int kTextTag = 0;
constexpr int kImageTag = 1;
constexpr int kNoiseTag = 2;
constexpr int kTagsPerPatch = 3;

int PatchTag(int patch, int tag) { return kTagsPerPatch * (patch + 1) + tag; }

// The tag of `tag` for `patch`, or for the whole sequence.
int TagOf(int patch, int tag) {
  return patch == kWholeSequence ? tag : PatchTag(patch, tag);
}

void Send(const parallel::Group& group, const char* operation,
          const at::Tensor& tensor, int destination, int tag) {
  std::vector<at::Tensor> tensors = {tensor.contiguous()};
  parallel::Wait(
      group, operation,
      parallel::PostSend(group, operation, tensors, destination, tag));
}

absl::StatusOr<at::Tensor> Receive(const PipeFusionStages& stages,
                                   const char* operation, StageTensor what,
                                   int patch, const std::vector<int64_t>& shape,
                                   int source, int tag) {
  absl::StatusOr<at::Tensor> buffer = stages.receive_buffer(what, patch, shape);
  if (!buffer.ok()) return buffer.status();
  std::vector<at::Tensor> tensors = {*buffer};
  parallel::Wait(
      stages.group, operation,
      parallel::PostReceive(stages.group, operation, tensors, source, tag));
  return *buffer;
}

// The previous stage's streams for image tokens `span` (`patch`: its index,
// or kWholeSequence).
absl::StatusOr<StageStreams> ReceiveStreams(const StageModel& model,
                                            const PipeFusionStages& stages,
                                            const models::TokenSpan& span,
                                            int patch) {
  const int previous = stages.group.rank() - 1;
  StageStreams streams;
  if (model.text_tokens() > 0) {
    absl::StatusOr<at::Tensor> text =
        Receive(stages, "receive of the previous stage's text stream",
                StageTensor::kTextStream, kWholeSequence,
                {model.batch(), model.text_tokens(), model.hidden_size()},
                previous, TagOf(patch, kTextTag));
    if (!text.ok()) return text.status();
    streams.text = *text;
  }
  absl::StatusOr<at::Tensor> image =
      Receive(stages, "receive of the previous stage's image stream",
              StageTensor::kImageStream, patch,
              {model.batch(), span.tokens, model.hidden_size()}, previous,
              TagOf(patch, kImageTag));
  if (!image.ok()) return image.status();
  streams.image = *image;
  return streams;
}

absl::StatusOr<at::Tensor> Staged(StageModel& model,
                                  const PipeFusionStages& stages) {
  const parallel::Group& group = stages.group;
  const int stage = group.rank();
  const int last = group.size() - 1;
  const models::TokenSpan whole{.begin = 0, .tokens = model.image_tokens()};
  std::optional<StageStreams> incoming;
  if (stage > 0) {
    absl::StatusOr<StageStreams> received =
        ReceiveStreams(model, stages, whole, kWholeSequence);
    if (!received.ok()) return received.status();
    incoming = *std::move(received);
  }
  stages.stale_kv->BeginWholeSequence();
  absl::StatusOr<StageStreams> streams = model.Forward(whole, incoming);
  if (!streams.ok()) return streams.status();
  if (stage < last) {
    if (model.text_tokens() > 0) {
      Send(group, "send of the text stream to the next stage", streams->text,
           stage + 1, kTextTag);
    }
    Send(group, "send of the image stream to the next stage", streams->image,
         stage + 1, kImageTag);
    absl::StatusOr<at::Tensor> noise =
        Receive(stages, "receive of the last stage's noise prediction",
                StageTensor::kNoisePrediction, kWholeSequence,
                {model.batch(), whole.tokens, model.output_channels()}, last,
                kNoiseTag);
    if (!noise.ok()) return noise.status();
    // The buffer is overwritten by the next step's receive.
    return noise->clone();
  }
  absl::StatusOr<at::Tensor> noise = model.Output(whole, streams->image);
  if (!noise.ok()) return noise.status();
  for (int other = 0; other < last; ++other) {
    Send(group, "send of the noise prediction to an earlier stage", *noise,
         other, kNoiseTag);
  }
  return noise;
}

absl::StatusOr<at::Tensor> Patched(StageModel& model,
                                   const PipeFusionStages& stages) {
  const parallel::Group& group = stages.group;
  const int stage = group.rank();
  const int last = group.size() - 1;
  const std::vector<int64_t>& offsets = stages.patch_offsets;
  const int patches = static_cast<int>(offsets.size()) - 1;
  // Sends stay posted while later patches compute; that overlap is the
  // pipeline. Their tensors must live until the waits below.
  std::deque<std::vector<at::Tensor>> sent;
  std::vector<c10::intrusive_ptr<c10d::Work>> sends;
  const auto post = [&](const char* operation, const at::Tensor& tensor,
                        int destination, int tag) {
    sent.push_back({tensor.contiguous()});
    sends.push_back(
        parallel::PostSend(group, operation, sent.back(), destination, tag));
  };
  std::vector<at::Tensor> noise(patches);
  for (int patch = 0; patch < patches; ++patch) {
    const models::TokenSpan span{.begin = offsets[patch],
                                 .tokens = offsets[patch + 1] - offsets[patch]};
    std::optional<StageStreams> incoming;
    if (stage > 0) {
      absl::StatusOr<StageStreams> received =
          ReceiveStreams(model, stages, span, patch);
      if (!received.ok()) return received.status();
      incoming = *std::move(received);
    }
    stages.stale_kv->BeginPatch(model.AttentionRows(span));
    absl::StatusOr<StageStreams> streams = model.Forward(span, incoming);
    if (!streams.ok()) return streams.status();
    if (stage < last) {
      if (model.text_tokens() > 0) {
        post("send of a patch's text stream to the next stage", streams->text,
             stage + 1, PatchTag(patch, kTextTag));
      }
      post("send of an image patch to the next stage", streams->image,
           stage + 1, PatchTag(patch, kImageTag));
      continue;
    }
    absl::StatusOr<at::Tensor> output = model.Output(span, streams->image);
    if (!output.ok()) return output.status();
    noise[patch] = *output;
    for (int other = 0; other < last; ++other) {
      post("send of a patch's noise prediction to an earlier stage", *output,
           other, PatchTag(patch, kNoiseTag));
    }
  }
  if (stage < last) {
    for (int patch = 0; patch < patches; ++patch) {
      absl::StatusOr<at::Tensor> received = Receive(
          stages, "receive of the last stage's noise prediction for a patch",
          StageTensor::kNoisePrediction, patch,
          {model.batch(), offsets[patch + 1] - offsets[patch],
           model.output_channels()},
          last, PatchTag(patch, kNoiseTag));
      if (!received.ok()) return received.status();
      noise[patch] = received->clone();
    }
  }
  for (const c10::intrusive_ptr<c10d::Work>& work : sends) {
    parallel::Wait(group, "send of a patch to another stage", work);
  }
  return at::cat(noise, /*dim=*/1);
}

}  // namespace

absl::StatusOr<at::Tensor> StagedForward(StageModel& model,
                                         const PipeFusionStages& stages) {
  try {
    return Staged(model, stages);
  } catch (const parallel::CollectiveError& e) {
    return e.status();
  }
}

absl::StatusOr<at::Tensor> PatchedForward(StageModel& model,
                                          const PipeFusionStages& stages) {
  const int64_t image_tokens = model.image_tokens();
  const std::vector<int64_t>& offsets = stages.patch_offsets;
  if (offsets.size() < 2 || offsets.front() != 0 ||
      offsets.back() != image_tokens) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PipeFusion patch offsets [", absl::StrJoin(offsets, ", "),
        "] do not split the ", image_tokens,
        " image tokens (expected 0 first and ", image_tokens, " last)"));
  }
  try {
    return Patched(model, stages);
  } catch (const parallel::CollectiveError& e) {
    return e.status();
  }
}

}  // namespace ditserve::pipelines
