#include "core/parallel/pipefusion.h"

#include <torch/torch.h>

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
  ASSIGN_OR_RETURN(at::Tensor buffer,
                   stages.receive_buffer(what, patch, shape));
  std::vector<at::Tensor> tensors = {buffer};
  parallel::Wait(
      stages.group, operation,
      parallel::PostReceive(stages.group, operation, tensors, source, tag));
  return buffer;
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
    ASSIGN_OR_RETURN(
        at::Tensor text,
        Receive(stages, "receive of the previous stage's text stream",
                StageTensor::kTextStream, kWholeSequence,
                {model.batch(), model.text_tokens(), model.hidden_size()},
                previous, TagOf(patch, kTextTag)));
    streams.text = text;
  }
  ASSIGN_OR_RETURN(
      at::Tensor image,
      Receive(stages, "receive of the previous stage's image stream",
              StageTensor::kImageStream, patch,
              {model.batch(), span.tokens, model.hidden_size()}, previous,
              TagOf(patch, kImageTag)));
  streams.image = image;
  return streams;
}

int SpDegree(const PipeFusionStages& stages) {
  return stages.sp.has_value() ? stages.sp->size() : 1;
}

// The image tokens of `span` that sp rank `index` computes.
models::TokenSpan ShardOf(const models::TokenSpan& span, int degree,
                          int index) {
  const config::PipeFusionShard shard =
      config::PipeFusionShardOf(static_cast<int>(span.tokens), degree, index);
  return {.begin = span.begin + shard.begin, .tokens = shard.tokens};
}

// This rank's share of `span`.
models::TokenSpan OwnShard(const models::TokenSpan& span,
                           const PipeFusionStages& stages) {
  return ShardOf(span, SpDegree(stages),
                 stages.sp.has_value() ? stages.sp->rank() : 0);
}

// The attention rows of every sp rank's share of `span`, [sp, S].
at::Tensor ShardRows(const StageModel& model, const models::TokenSpan& span,
                     const PipeFusionStages& stages) {
  std::vector<at::Tensor> rows;
  for (int index = 0; index < SpDegree(stages); ++index) {
    rows.push_back(model.AttentionRows(ShardOf(span, SpDegree(stages), index)));
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
  std::vector<int64_t> sources;
  int64_t offset = 0;
  for (const models::TokenSpan& span : spans) {
    const int tokens = static_cast<int>(span.tokens);
    for (int index = 0; index < degree; ++index) {
      const config::PipeFusionShard shard =
          config::PipeFusionShardOf(tokens, degree, index);
      for (int token = shard.owned_begin; token < shard.owned_end; ++token) {
        sources.push_back(index * own.size(1) + offset + token - shard.begin);
      }
    }
    offset += config::PipeFusionShardOf(tokens, degree, 0).tokens;
  }
  return gathered.index_select(
      1, at::tensor(sources, at::kLong).to(gathered.device()));
}

absl::StatusOr<at::Tensor> Staged(StageModel& model,
                                  const PipeFusionStages& stages) {
  const parallel::Group& group = stages.group;
  const int stage = group.rank();
  const int last = group.size() - 1;
  const models::TokenSpan whole{.begin = 0, .tokens = model.image_tokens()};
  const models::TokenSpan own = OwnShard(whole, stages);
  std::optional<StageStreams> incoming;
  if (stage > 0) {
    ASSIGN_OR_RETURN(StageStreams received,
                     ReceiveStreams(model, stages, own, kWholeSequence));
    incoming = std::move(received);
  }
  stages.stale_kv->BeginWholeSequence(ShardRows(model, whole, stages));
  ASSIGN_OR_RETURN(StageStreams streams, model.Forward(own, incoming));
  if (stage < last) {
    if (model.text_tokens() > 0) {
      Send(group, "send of the text stream to the next stage", streams.text,
           stage + 1, kTextTag);
    }
    Send(group, "send of the image stream to the next stage", streams.image,
         stage + 1, kImageTag);
    ASSIGN_OR_RETURN(
        at::Tensor noise,
        Receive(stages, "receive of the last stage's noise prediction",
                StageTensor::kNoisePrediction, kWholeSequence,
                {model.batch(), own.tokens, model.output_channels()}, last,
                kNoiseTag));
    // The buffer is overwritten by the next step's receive.
    return GatherShards(stages, {whole}, noise.clone());
  }
  ASSIGN_OR_RETURN(at::Tensor noise, model.Output(own, streams.image));
  for (int other = 0; other < last; ++other) {
    Send(group, "send of the noise prediction to an earlier stage", noise,
         other, kNoiseTag);
  }
  return GatherShards(stages, {whole}, noise);
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
  std::vector<models::TokenSpan> spans;
  for (int patch = 0; patch < patches; ++patch) {
    spans.push_back({.begin = offsets[patch],
                     .tokens = offsets[patch + 1] - offsets[patch]});
  }
  std::vector<at::Tensor> noise(patches);
  for (int patch = 0; patch < patches; ++patch) {
    const models::TokenSpan own = OwnShard(spans[patch], stages);
    std::optional<StageStreams> incoming;
    if (stage > 0) {
      ASSIGN_OR_RETURN(StageStreams received,
                       ReceiveStreams(model, stages, own, patch));
      incoming = std::move(received);
    }
    stages.stale_kv->BeginPatch(ShardRows(model, spans[patch], stages));
    ASSIGN_OR_RETURN(StageStreams streams, model.Forward(own, incoming));
    if (stage < last) {
      if (model.text_tokens() > 0) {
        post("send of a patch's text stream to the next stage", streams.text,
             stage + 1, PatchTag(patch, kTextTag));
      }
      post("send of an image patch to the next stage", streams.image, stage + 1,
           PatchTag(patch, kImageTag));
      continue;
    }
    ASSIGN_OR_RETURN(at::Tensor output, model.Output(own, streams.image));
    noise[patch] = output;
    for (int other = 0; other < last; ++other) {
      post("send of a patch's noise prediction to an earlier stage", output,
           other, PatchTag(patch, kNoiseTag));
    }
  }
  if (stage < last) {
    for (int patch = 0; patch < patches; ++patch) {
      ASSIGN_OR_RETURN(
          at::Tensor received,
          Receive(stages,
                  "receive of the last stage's noise prediction for a patch",
                  StageTensor::kNoisePrediction, patch,
                  {model.batch(), OwnShard(spans[patch], stages).tokens,
                   model.output_channels()},
                  last, PatchTag(patch, kNoiseTag)));
      noise[patch] = received.clone();
    }
  }
  for (const c10::intrusive_ptr<c10d::Work>& work : sends) {
    parallel::Wait(group, "send of a patch to another stage", work);
  }
  return GatherShards(stages, spans, at::cat(noise, /*dim=*/1));
}

}  // namespace

absl::StatusOr<at::Tensor> StagedForward(StageModel& model,
                                         const PipeFusionStages& stages) {
  return base::Guarded("PipeFusion staged forward",
                       [&] { return Staged(model, stages); });
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
  return base::Guarded("PipeFusion patched forward",
                       [&] { return Patched(model, stages); });
}

}  // namespace ditserve::parallel
