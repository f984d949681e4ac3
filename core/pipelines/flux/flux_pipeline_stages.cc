#include "core/pipelines/flux/flux_pipeline_stages.h"

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

void Send(const parallel::Group& group, const char* operation,
          const at::Tensor& tensor, int destination, int tag) {
  std::vector<at::Tensor> tensors = {tensor.contiguous()};
  parallel::Wait(
      group, operation,
      parallel::PostSend(group, operation, tensors, destination, tag));
}

absl::StatusOr<at::Tensor> Receive(const FluxPipelineStages& stages,
                                   const char* operation, FluxStageTensor what,
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

absl::StatusOr<at::Tensor> Staged(models::FluxTransformer2DModel& transformer,
                                  const models::FluxTransformerInputs& inputs,
                                  const FluxPipelineStages& stages) {
  const parallel::Group& group = stages.group;
  const int stage = group.rank();
  const int last = group.size() - 1;
  const int64_t batch = inputs.hidden_states.size(0);
  const int64_t dim = transformer.config().inner_dim();
  std::optional<models::FluxStreams> incoming;
  if (stage > 0) {
    absl::StatusOr<at::Tensor> text =
        Receive(stages, "receive of the previous stage's text stream",
                FluxStageTensor::kTextStream, kWholeSequence,
                {batch, inputs.encoder_hidden_states.size(1), dim}, stage - 1,
                kTextTag);
    if (!text.ok()) return text.status();
    absl::StatusOr<at::Tensor> image = Receive(
        stages, "receive of the previous stage's image stream",
        FluxStageTensor::kImageStream, kWholeSequence,
        {batch, inputs.hidden_states.size(1), dim}, stage - 1, kImageTag);
    if (!image.ok()) return image.status();
    incoming = models::FluxStreams{.image = *image, .text = *text};
  }
  stages.stale_kv->BeginWholeSequence();
  absl::StatusOr<models::FluxStreams> streams =
      transformer.ForwardStage(inputs, incoming);
  if (!streams.ok()) return streams.status();
  if (stage < last) {
    Send(group, "send of the text stream to the next stage", streams->text,
         stage + 1, kTextTag);
    Send(group, "send of the image stream to the next stage", streams->image,
         stage + 1, kImageTag);
    absl::StatusOr<at::Tensor> noise =
        Receive(stages, "receive of the last stage's noise prediction",
                FluxStageTensor::kNoisePrediction, kWholeSequence,
                {batch, inputs.hidden_states.size(1),
                 transformer.config().output_channels()},
                last, kNoiseTag);
    if (!noise.ok()) return noise.status();
    // The buffer is overwritten by the next step's receive.
    return noise->clone();
  }
  absl::StatusOr<at::Tensor> noise =
      transformer.StageOutput(inputs, streams->image);
  if (!noise.ok()) return noise.status();
  for (int other = 0; other < last; ++other) {
    Send(group, "send of the noise prediction to an earlier stage", *noise,
         other, kNoiseTag);
  }
  return noise;
}

absl::StatusOr<at::Tensor> Patched(models::FluxTransformer2DModel& transformer,
                                   const models::FluxTransformerInputs& inputs,
                                   const FluxPipelineStages& stages) {
  const parallel::Group& group = stages.group;
  const int stage = group.rank();
  const int last = group.size() - 1;
  const int64_t batch = inputs.hidden_states.size(0);
  const int64_t text_tokens = inputs.encoder_hidden_states.size(1);
  const int64_t dim = transformer.config().inner_dim();
  const int64_t out_channels = transformer.config().output_channels();
  const std::vector<int64_t>& offsets = stages.patch_offsets;
  const int patches = static_cast<int>(offsets.size()) - 1;
  const at::Tensor text_rows = at::arange(text_tokens, at::kLong);
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
    const int64_t begin = offsets[patch];
    const int64_t tokens = offsets[patch + 1] - begin;
    models::FluxTransformerInputs patch_inputs = inputs;
    patch_inputs.hidden_states = inputs.hidden_states.narrow(1, begin, tokens);
    patch_inputs.img_ids = inputs.img_ids.narrow(0, begin, tokens);
    std::optional<models::FluxStreams> incoming;
    if (stage > 0) {
      absl::StatusOr<at::Tensor> text = Receive(
          stages, "receive of the previous stage's text stream for a patch",
          FluxStageTensor::kTextStream, kWholeSequence,
          {batch, text_tokens, dim}, stage - 1, PatchTag(patch, kTextTag));
      if (!text.ok()) return text.status();
      absl::StatusOr<at::Tensor> image =
          Receive(stages, "receive of the previous stage's image patch",
                  FluxStageTensor::kImageStream, patch, {batch, tokens, dim},
                  stage - 1, PatchTag(patch, kImageTag));
      if (!image.ok()) return image.status();
      incoming = models::FluxStreams{.image = *image, .text = *text};
    }
    stages.stale_kv->BeginPatch(at::cat(
        {text_rows, text_tokens + begin + at::arange(tokens, at::kLong)}));
    absl::StatusOr<models::FluxStreams> streams =
        transformer.ForwardStage(patch_inputs, incoming);
    if (!streams.ok()) return streams.status();
    if (stage < last) {
      post("send of a patch's text stream to the next stage", streams->text,
           stage + 1, PatchTag(patch, kTextTag));
      post("send of an image patch to the next stage", streams->image,
           stage + 1, PatchTag(patch, kImageTag));
      continue;
    }
    absl::StatusOr<at::Tensor> output =
        transformer.StageOutput(patch_inputs, streams->image);
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
          FluxStageTensor::kNoisePrediction, patch,
          {batch, offsets[patch + 1] - offsets[patch], out_channels}, last,
          PatchTag(patch, kNoiseTag));
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

absl::StatusOr<at::Tensor> StagedFluxForward(
    models::FluxTransformer2DModel& transformer,
    const models::FluxTransformerInputs& inputs,
    const FluxPipelineStages& stages) {
  try {
    return Staged(transformer, inputs, stages);
  } catch (const parallel::CollectiveError& e) {
    return e.status();
  }
}

absl::StatusOr<at::Tensor> PatchedFluxForward(
    models::FluxTransformer2DModel& transformer,
    const models::FluxTransformerInputs& inputs,
    const FluxPipelineStages& stages) {
  const int64_t image_tokens = inputs.hidden_states.size(1);
  const std::vector<int64_t>& offsets = stages.patch_offsets;
  if (offsets.size() < 2 || offsets.front() != 0 ||
      offsets.back() != image_tokens) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PipeFusion patch offsets [", absl::StrJoin(offsets, ", "),
        "] do not split the ", image_tokens,
        " image tokens (expected 0 first and ", image_tokens, " last)"));
  }
  try {
    return Patched(transformer, inputs, stages);
  } catch (const parallel::CollectiveError& e) {
    return e.status();
  }
}

}  // namespace ditserve::pipelines
