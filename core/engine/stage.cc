#include "core/engine/stage.h"

namespace ditserve::engine {

absl::string_view StageName(Stage stage) {
  switch (stage) {
    case Stage::kQueue:
      return "queue";
    case Stage::kFreeze:
      return "freeze";
    case Stage::kBroadcast:
      return "broadcast";
    case Stage::kPrepare:
      return "prepare";
    case Stage::kTextEncode:
      return "text_encode";
    case Stage::kDenoise:
      return "denoise";
    case Stage::kPipelineWait:
      return "pipeline_wait";
    case Stage::kVaeDecode:
      return "vae_decode";
    case Stage::kGather:
      return "gather";
    case Stage::kEncode:
      return "encode";
    case Stage::kTotal:
      return "total";
  }
  return "unknown";
}

}  // namespace ditserve::engine
