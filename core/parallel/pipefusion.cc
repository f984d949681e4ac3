#include "core/parallel/pipefusion.h"

#include <torch/torch.h>

#include <chrono>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "core/config/derived_shapes.h"

namespace ditserve::parallel {
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

// Waits for a transfer with another stage over `group` (stages.group or
// stages.feedback), telling stages.waited how long.
void WaitForStage(const PipeFusionStages& stages, const parallel::Group& group,
                  const char* operation,
                  const c10::intrusive_ptr<c10d::Work>& work) {
  const auto start = std::chrono::steady_clock::now();
  parallel::Wait(group, operation, work);
  if (stages.waited) {
    stages.waited(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  }
}

void Send(const PipeFusionStages& stages, const parallel::Group& group,
          const char* operation, const at::Tensor& tensor, int destination,
          int tag) {
  std::vector<at::Tensor> tensors = {tensor.contiguous()};
  WaitForStage(stages, group, operation,
               parallel::PostSend(group, operation, tensors, destination, tag));
}

absl::StatusOr<at::Tensor> Receive(const PipeFusionStages& stages,
                                   const parallel::Group& group,
                                   const char* operation, StageTensor what,
                                   int patch, const std::vector<int64_t>& shape,
                                   int source, int tag) {
  ASSIGN_OR_RETURN(at::Tensor buffer,
                   stages.receive_buffer(what, patch, shape));
  std::vector<at::Tensor> tensors = {buffer};
  WaitForStage(stages, group, operation,
               parallel::PostReceive(group, operation, tensors, source, tag));
  return buffer;
}

// The previous stage's streams for this rank's share of `patch` (`index`:
// the image patch's, or kWholeSequence for the whole image or none of it).
// A stream the patch has no tokens of is not sent: it is [B, 0, dim], like
// the one that is.
absl::StatusOr<StageStreams> ReceiveStreams(const StageModel& model,
                                            const PipeFusionStages& stages,
                                            const StagePatch& patch,
                                            int index) {
  const int previous = stages.group.rank() - 1;
  const std::vector<int64_t> no_tokens = {model.batch(), 0,
                                          model.hidden_size()};
  StageStreams streams;
  if (patch.text) {
    ASSIGN_OR_RETURN(
        streams.text,
        Receive(stages, stages.group,
                "receive of the previous stage's text stream",
                StageTensor::kTextStream, kWholeSequence,
                {model.batch(), model.text_tokens(), model.hidden_size()},
                previous, TagOf(index, kTextTag)));
  }
  if (patch.image.tokens == 0) {
    streams.image = streams.text.new_empty(no_tokens);
    return streams;
  }
  ASSIGN_OR_RETURN(
      streams.image,
      Receive(stages, stages.group,
              "receive of the previous stage's image stream",
              StageTensor::kImageStream, index,
              {model.batch(), patch.image.tokens, model.hidden_size()},
              previous, TagOf(index, kImageTag)));
  if (!patch.text && model.text_tokens() > 0) {
    streams.text = streams.image.new_empty(no_tokens);
  }
  return streams;
}

int SpDegree(const PipeFusionStages& stages) {
  return stages.sp.has_value() ? stages.sp->size() : 1;
}

// The tokens of `patch` that sp rank `index` computes: its share of the
// image tokens, with the whole text when the patch has it.
StagePatch ShardOf(const StagePatch& patch, int degree, int index) {
  if (patch.image.tokens == 0) return patch;
  const config::PipeFusionShard shard = config::PipeFusionShardOf(
      static_cast<int>(patch.image.tokens), degree, index);
  return {.image = {.begin = patch.image.begin + shard.begin,
                    .tokens = shard.tokens},
          .text = patch.text};
}

// This rank's share of `patch`.
StagePatch OwnShard(const StagePatch& patch, const PipeFusionStages& stages) {
  return ShardOf(patch, SpDegree(stages),
                 stages.sp.has_value() ? stages.sp->rank() : 0);
}

// The attention rows of every sp rank's share of `patch`, [sp, S].
at::Tensor ShardRows(const StageModel& model, const StagePatch& patch,
                     const PipeFusionStages& stages) {
  std::vector<at::Tensor> rows;
  for (int index = 0; index < SpDegree(stages); ++index) {
    rows.push_back(
        model.AttentionRows(ShardOf(patch, SpDegree(stages), index)));
  }
  return at::stack(rows);
}

// The output for every image token from `own` [B, T, C], this rank's outputs
// for its shares of `spans` in order: without sequence parallelism that is
// it; else the sp ranks' outputs are all-gathered and every token is taken
// from the rank that owns it.
at::Tensor GatherShards(const PipeFusionStages& stages,
                        const std::vector<models::TokenSpan>& spans,
                        const at::Tensor& own) {
  if (!stages.sp.has_value()) return own;
  const int degree = SpDegree(stages);
  // [B, sp × T, C]: rank i's outputs at [i × T, (i + 1) × T).
  const at::Tensor gathered =
      parallel::AllGather(*stages.sp, "all-gather of the sp ranks' outputs",
                          own.contiguous(), /*dim=*/1);
  // Each rank owns one run of each span's tokens. Slicing them out needs no
  // index tensor, whose copy to a GPU would wait for the GPU to catch up.
  std::vector<at::Tensor> runs;
  int64_t offset = 0;
  for (const models::TokenSpan& span : spans) {
    const int tokens = static_cast<int>(span.tokens);
    for (int index = 0; index < degree; ++index) {
      const config::PipeFusionShard shard =
          config::PipeFusionShardOf(tokens, degree, index);
      runs.push_back(gathered.narrow(
          1, index * own.size(1) + offset + shard.owned_begin - shard.begin,
          shard.owned_end - shard.owned_begin));
    }
    offset += config::PipeFusionShardOf(tokens, degree, 0).tokens;
  }
  return at::cat(runs, /*dim=*/1);
}

absl::StatusOr<at::Tensor> Staged(StageModel& model,
                                  const PipeFusionStages& stages) {
  const parallel::Group& group = stages.group;
  const int stage = group.rank();
  const int last = group.size() - 1;
  const StagePatch whole{.image = {.begin = 0, .tokens = model.image_tokens()},
                         .text = model.text_tokens() > 0};
  const StagePatch own = OwnShard(whole, stages);
  std::optional<StageStreams> incoming;
  if (stage > 0) {
    ASSIGN_OR_RETURN(StageStreams received,
                     ReceiveStreams(model, stages, own, kWholeSequence));
    incoming = std::move(received);
  }
  stages.stale_kv->BeginWholeSequence(ShardRows(model, whole, stages));
  ASSIGN_OR_RETURN(StageStreams streams, model.Forward(own, incoming));
  if (stage < last) {
    if (own.text) {
      Send(stages, group, "send of the text stream to the next stage",
           streams.text, stage + 1, kTextTag);
    }
    Send(stages, group, "send of the image stream to the next stage",
         streams.image, stage + 1, kImageTag);
    ASSIGN_OR_RETURN(
        at::Tensor noise,
        Receive(stages, stages.feedback,
                "receive of the last stage's noise prediction",
                StageTensor::kNoisePrediction, kWholeSequence,
                {model.batch(), own.image.tokens, model.output_channels()},
                last, kNoiseTag));
    // The buffer is overwritten by the next step's receive.
    return GatherShards(stages, {whole.image}, noise.clone());
  }
  ASSIGN_OR_RETURN(at::Tensor noise, model.Output(own.image, streams.image));
  for (int other = 0; other < last; ++other) {
    Send(stages, stages.feedback,
         "send of the noise prediction to an earlier stage", noise, other,
         kNoiseTag);
  }
  return GatherShards(stages, {whole.image}, noise);
}

absl::StatusOr<at::Tensor> Patched(StageModel& model,
                                   const PipeFusionStages& stages, int step) {
  const parallel::Group& group = stages.group;
  const int stage = group.rank();
  const int last = group.size() - 1;
  const std::vector<int64_t>& offsets = stages.patch_offsets;
  const int patches = static_cast<int>(offsets.size()) - 1;
  // Sends stay posted while later patches compute; that overlap is the
  // pipeline. Their tensors must live until the waits below.
  std::deque<std::vector<at::Tensor>> sent;
  std::vector<std::pair<const parallel::Group*, c10::intrusive_ptr<c10d::Work>>>
      sends;
  const auto post = [&](const parallel::Group& over, const char* operation,
                        const at::Tensor& tensor, int destination, int tag) {
    sent.push_back({tensor.contiguous()});
    sends.emplace_back(&over, parallel::PostSend(over, operation, sent.back(),
                                                 destination, tag));
  };
  std::vector<models::TokenSpan> spans;
  for (int patch = 0; patch < patches; ++patch) {
    spans.push_back({.begin = offsets[patch],
                     .tokens = offsets[patch + 1] - offsets[patch]});
  }
  // The image patches, then the text patch (kWholeSequence): the text yields
  // no noise prediction, so the last stage computes it while the first one
  // steps the latents and starts the next step, instead of leaving that gap
  // idle.
  std::vector<int> order;
  for (int patch = 0; patch < patches; ++patch) order.push_back(patch);
  if (model.text_tokens() > 0 && !stages.IsLastStep(step)) {
    order.push_back(kWholeSequence);
  }
  std::vector<at::Tensor> noise(patches);
  for (const int index : order) {
    const StagePatch patch =
        index == kWholeSequence
            ? StagePatch{.image = {.begin = 0, .tokens = 0}, .text = true}
            : StagePatch{.image = spans[index], .text = false};
    const StagePatch own = OwnShard(patch, stages);
    std::optional<StageStreams> incoming;
    if (stage > 0) {
      ASSIGN_OR_RETURN(StageStreams received,
                       ReceiveStreams(model, stages, own, index));
      incoming = std::move(received);
    }
    stages.stale_kv->BeginPatch(ShardRows(model, patch, stages));
    ASSIGN_OR_RETURN(StageStreams streams, model.Forward(own, incoming));
    if (stage < last) {
      if (own.text) {
        post(group, "send of the text stream to the next stage", streams.text,
             stage + 1, TagOf(index, kTextTag));
      } else {
        post(group, "send of an image patch to the next stage", streams.image,
             stage + 1, TagOf(index, kImageTag));
      }
      continue;
    }
    if (index == kWholeSequence) continue;
    ASSIGN_OR_RETURN(at::Tensor output, model.Output(own.image, streams.image));
    noise[index] = output;
    for (int other = 0; other < last; ++other) {
      post(stages.feedback,
           "send of a patch's noise prediction to an earlier stage", output,
           other, PatchTag(index, kNoiseTag));
    }
  }
  if (stage < last) {
    for (int patch = 0; patch < patches; ++patch) {
      ASSIGN_OR_RETURN(
          at::Tensor received,
          Receive(stages, stages.feedback,
                  "receive of the last stage's noise prediction for a patch",
                  StageTensor::kNoisePrediction, patch,
                  {model.batch(),
                   OwnShard({.image = spans[patch]}, stages).image.tokens,
                   model.output_channels()},
                  last, PatchTag(patch, kNoiseTag)));
      noise[patch] = received.clone();
    }
  }
  for (const auto& [over, work] : sends) {
    WaitForStage(stages, *over, "send of a patch to another stage", work);
  }
  return GatherShards(stages, spans, at::cat(noise, /*dim=*/1));
}

absl::StatusOr<at::Tensor> PatchedForward(StageModel& model,
                                          const PipeFusionStages& stages,
                                          int step) {
  const int64_t image_tokens = model.image_tokens();
  const std::vector<int64_t>& offsets = stages.patch_offsets;
  if (offsets.size() < 2 || offsets.front() != 0 ||
      offsets.back() != image_tokens) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PipeFusion patch offsets [", absl::StrJoin(offsets, ", "),
        "] do not split the ", image_tokens,
        " image tokens (expected 0 first and ", image_tokens, " last)"));
  }
  return base::Guarded("PipeFusion patched forward",
                       [&] { return Patched(model, stages, step); });
}

}  // namespace

absl::StatusOr<at::Tensor> StageForward(StageModel& model,
                                        const PipeFusionStages& stages,
                                        int step) {
  if (stages.IsWholeSequenceStep(step)) {
    return base::Guarded("PipeFusion staged forward",
                         [&] { return Staged(model, stages); });
  }
  return PatchedForward(model, stages, step);
}

}  // namespace ditserve::parallel
