#ifndef DITSERVE_CORE_ENGINE_STAGE_H_
#define DITSERVE_CORE_ENGINE_STAGE_H_

#include <array>

#include "absl/strings/string_view.h"

namespace ditserve::engine {

// The stages of one request, in order. Their names are the `stage` label of
// ditserve_stage_duration_seconds; this is the only place they are defined.
enum class Stage {
  kQueue,
  kFreeze,
  kBroadcast,
  kPrepare,
  kTextEncode,
  kDenoise,
  kVaeDecode,
  kGather,
  kEncode,
  kTotal,
};

inline constexpr int kStageCount = 10;

inline constexpr std::array<Stage, kStageCount> kAllStages = {
    Stage::kQueue,      Stage::kFreeze,  Stage::kBroadcast, Stage::kPrepare,
    Stage::kTextEncode, Stage::kDenoise, Stage::kVaeDecode, Stage::kGather,
    Stage::kEncode,     Stage::kTotal};

// "queue", "freeze", "broadcast", "prepare", "text_encode", "denoise",
// "vae_decode", "gather", "encode", "total".
absl::string_view StageName(Stage stage);

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_STAGE_H_
