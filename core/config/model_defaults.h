#ifndef DITSERVE_CORE_CONFIG_MODEL_DEFAULTS_H_
#define DITSERVE_CORE_CONFIG_MODEL_DEFAULTS_H_

// The ONE table of per-model-family defaults and family facts. Nothing else in
// the code base may hold a default for a request field.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ditserve/v1/generation.pb.h"

namespace ditserve::config {

enum class ModelFamily {
  kFluxDev,
  kFluxSchnell,
  kPixArtAlpha,
  kPixArtSigma,
  kSd3Medium,
};

// What an omitted request field becomes, and how the family conditions on
// text; one row per family.
struct FamilyDefaults {
  ModelFamily family;
  // Served model name, e.g. "flux-dev".
  absl::string_view name;
  int height;
  int width;
  int num_inference_steps;
  float guidance_scale;
  int max_sequence_length;
  // Upper bound on max_sequence_length the text pipeline accepts.
  int max_sequence_length_limit;
  v1::SchedulerKind scheduler;
  // Static timestep shift (ignored when dynamic_shift is set).
  float scheduler_shift;
  bool scheduler_dynamic_shift;
  bool use_resolution_binning;
  // Conditional and unconditional branches (guidance_scale > 1 enables it).
  bool uses_classifier_free_guidance;
  // guidance_scale goes into the transformer's guidance embedding.
  bool uses_guidance_embedding;
  // Text tokens are part of the self-attention sequence (MM-DiT) rather than
  // attended to by cross-attention.
  bool joint_attention;
  // CLIP tokens placed in front of the T5 tokens in the sequence (SD3: 77).
  int clip_sequence_tokens;
};

// Every family, in a stable order.
const std::vector<FamilyDefaults>& AllFamilyDefaults();

const FamilyDefaults& DefaultsFor(ModelFamily family);

// "flux-dev" → kFluxDev; NOT_FOUND naming the known names otherwise.
absl::StatusOr<ModelFamily> ParseModelFamily(absl::string_view name);

absl::string_view ModelFamilyName(ModelFamily family);

// The defaults as reported by GetServerInfo.
v1::ModelDefaults ToProto(const FamilyDefaults& defaults);

}  // namespace ditserve::config

#endif  // DITSERVE_CORE_CONFIG_MODEL_DEFAULTS_H_
