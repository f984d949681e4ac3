#ifndef DITSERVE_CORE_ENGINE_STAGE_H_
#define DITSERVE_CORE_ENGINE_STAGE_H_

#include <array>

#include "absl/strings/string_view.h"

namespace ditserve::engine {

// The stages of one request, in order. Their names are the `stage` label of
// ditserve_stage_duration_seconds; this is the only place they are defined.
// kPipelineWait is the one that is not a step of its own: the part of
// kDenoise a PipeFusion rank spent waiting for another stage's tensors (its
// share of the pipeline bubble).
enum class Stage {
  kQueue,
  kFreeze,
  kBroadcast,
  kPrepare,
  kTextEncode,
  kDenoise,
  kPipelineWait,
  kVaeDecode,
  kGather,
  kEncode,
  kTotal,
};

inline constexpr int kStageCount = 11;

inline constexpr std::array<Stage, kStageCount> kAllStages = {
    Stage::kQueue,        Stage::kFreeze,     Stage::kBroadcast,
    Stage::kPrepare,      Stage::kTextEncode, Stage::kDenoise,
    Stage::kPipelineWait, Stage::kVaeDecode,  Stage::kGather,
    Stage::kEncode,       Stage::kTotal};

// "queue", "freeze", "broadcast", "prepare", "text_encode", "denoise",
// "pipeline_wait", "vae_decode", "gather", "encode", "total".
absl::string_view StageName(Stage stage);

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_STAGE_H_
