#ifndef DITSERVE_CORE_CONFIG_MODEL_DEFAULTS_H_
#define DITSERVE_CORE_CONFIG_MODEL_DEFAULTS_H_

// The shape of a served model's defaults row. The rows themselves live in
// each family's folder (e.g. core/families/flux/flux_defaults.h); nothing
// else in the code base may hold a default for a request field.

#include <ostream>

#include "absl/strings/string_view.h"
#include "ditserve/v1/generation.pb.h"

namespace ditserve::config {

// What an omitted request field becomes, and how the model conditions on
// text; one row per served model.
struct ModelDefaults {
  // Served model name, e.g. "flux-dev": GenerateRequest.model and
  // ditserve-make-checkpoint --family name a model by it.
  absl::string_view name;
  int height = 0;
  int width = 0;
  int num_inference_steps = 0;
  float guidance_scale = 0;
  int max_sequence_length = 0;
  // Upper bound on max_sequence_length the text pipeline accepts.
  int max_sequence_length_limit = 0;
  // max_sequence_length is fixed (CogVideoX-2b: its position table has rows
  // for exactly that many text tokens).
  bool fixed_sequence_length = false;
  v1::SchedulerKind scheduler = v1::SCHEDULER_KIND_UNSPECIFIED;
  // Static timestep shift (ignored when dynamic_shift is set).
  float scheduler_shift = 1;
  bool scheduler_dynamic_shift = false;
  bool use_resolution_binning = false;
  // Conditional and unconditional branches (guidance_scale > 1 enables it).
  bool uses_classifier_free_guidance = false;
  // guidance_scale goes into the transformer's guidance embedding.
  bool uses_guidance_embedding = false;
  // Text tokens are part of the self-attention sequence (MM-DiT) rather than
  // attended to by cross-attention.
  bool joint_attention = false;
  // CLIP tokens placed in front of the T5 tokens in the sequence (SD3: 77).
  int clip_sequence_tokens = 0;
  // Frames per output; video models take frame_step × N + 1 frames (image
  // models, frame_step 0, exactly 1) and play at fps.
  int num_frames = 1;
  int frame_step = 0;
  int fps = 0;
  // The model's diffusers pipeline offers use_dynamic_cfg (CogVideoX).
  bool supports_dynamic_cfg = false;

  // A video model: it makes frame_step × N + 1 frames.
  bool video() const { return frame_step > 0; }
};

// The defaults as reported by GetServerInfo.
v1::ModelDefaults ToProto(const ModelDefaults& defaults);

// The model's name (test parameters and logs name the row by it).
std::ostream& operator<<(std::ostream& out, const ModelDefaults& defaults);

}  // namespace ditserve::config

#endif  // DITSERVE_CORE_CONFIG_MODEL_DEFAULTS_H_
