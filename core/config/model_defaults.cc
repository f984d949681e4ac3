#include "core/config/model_defaults.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ditserve::config {
namespace {

constexpr auto kFlowMatch = v1::SCHEDULER_KIND_FLOW_MATCH_EULER;
constexpr auto kDpmSolver = v1::SCHEDULER_KIND_DPM_SOLVER_MULTISTEP;

}  // namespace

const std::vector<FamilyDefaults>& AllFamilyDefaults() {
  // Values follow the diffusers pipelines' defaults for each model.
  static const std::vector<FamilyDefaults>* const kTable =
      new std::vector<FamilyDefaults>{
          {.family = ModelFamily::kFluxDev,
           .name = "flux-dev",
           .height = 1024,
           .width = 1024,
           .num_inference_steps = 28,
           .guidance_scale = 3.5F,
           .max_sequence_length = 512,
           .max_sequence_length_limit = 512,
           .scheduler = kFlowMatch,
           .scheduler_shift = 3.0F,
           .scheduler_dynamic_shift = true,
           .use_resolution_binning = false,
           .uses_classifier_free_guidance = false,
           .uses_guidance_embedding = true,
           .joint_attention = true,
           .clip_sequence_tokens = 0},
          {.family = ModelFamily::kFluxSchnell,
           .name = "flux-schnell",
           .height = 1024,
           .width = 1024,
           .num_inference_steps = 4,
           .guidance_scale = 0.0F,
           .max_sequence_length = 256,
           .max_sequence_length_limit = 512,
           .scheduler = kFlowMatch,
           .scheduler_shift = 1.0F,
           .scheduler_dynamic_shift = false,
           .use_resolution_binning = false,
           .uses_classifier_free_guidance = false,
           .uses_guidance_embedding = false,
           .joint_attention = true,
           .clip_sequence_tokens = 0},
          {.family = ModelFamily::kPixArtAlpha,
           .name = "pixart-alpha",
           .height = 1024,
           .width = 1024,
           .num_inference_steps = 20,
           .guidance_scale = 4.5F,
           .max_sequence_length = 120,
           .max_sequence_length_limit = 512,
           .scheduler = kDpmSolver,
           .scheduler_shift = 1.0F,
           .scheduler_dynamic_shift = false,
           .use_resolution_binning = true,
           .uses_classifier_free_guidance = true,
           .uses_guidance_embedding = false,
           .joint_attention = false,
           .clip_sequence_tokens = 0},
          {.family = ModelFamily::kPixArtSigma,
           .name = "pixart-sigma",
           .height = 1024,
           .width = 1024,
           .num_inference_steps = 20,
           .guidance_scale = 4.5F,
           .max_sequence_length = 300,
           .max_sequence_length_limit = 512,
           .scheduler = kDpmSolver,
           .scheduler_shift = 1.0F,
           .scheduler_dynamic_shift = false,
           .use_resolution_binning = true,
           .uses_classifier_free_guidance = true,
           .uses_guidance_embedding = false,
           .joint_attention = false,
           .clip_sequence_tokens = 0},
          {.family = ModelFamily::kSd3Medium,
           .name = "sd3-medium",
           .height = 1024,
           .width = 1024,
           .num_inference_steps = 28,
           .guidance_scale = 7.0F,
           .max_sequence_length = 256,
           .max_sequence_length_limit = 512,
           .scheduler = kFlowMatch,
           .scheduler_shift = 3.0F,
           .scheduler_dynamic_shift = false,
           .use_resolution_binning = false,
           .uses_classifier_free_guidance = true,
           .uses_guidance_embedding = false,
           .joint_attention = true,
           .clip_sequence_tokens = 77},
      };
  return *kTable;
}

const FamilyDefaults& DefaultsFor(ModelFamily family) {
  for (const FamilyDefaults& row : AllFamilyDefaults()) {
    if (row.family == family) return row;
  }
  // Every enumerator has a row; AllFamilyDefaultsCoverEveryFamily tests it.
  return AllFamilyDefaults().front();
}

absl::StatusOr<ModelFamily> ParseModelFamily(absl::string_view name) {
  std::vector<absl::string_view> known;
  for (const FamilyDefaults& row : AllFamilyDefaults()) {
    if (row.name == name) return row.family;
    known.push_back(row.name);
  }
  return absl::NotFoundError(absl::StrCat(
      "model \"", name,
      "\" is not a known family; known: ", absl::StrJoin(known, ", ")));
}

absl::string_view ModelFamilyName(ModelFamily family) {
  return DefaultsFor(family).name;
}

v1::ModelDefaults ToProto(const FamilyDefaults& defaults) {
  v1::ModelDefaults out;
  out.set_height(defaults.height);
  out.set_width(defaults.width);
  out.set_num_inference_steps(defaults.num_inference_steps);
  out.set_guidance_scale(defaults.guidance_scale);
  out.set_max_sequence_length(defaults.max_sequence_length);
  out.set_scheduler(defaults.scheduler);
  out.set_scheduler_shift(defaults.scheduler_shift);
  out.set_scheduler_dynamic_shift(defaults.scheduler_dynamic_shift);
  out.set_use_resolution_binning(defaults.use_resolution_binning);
  out.set_uses_classifier_free_guidance(defaults.uses_classifier_free_guidance);
  out.set_uses_guidance_embedding(defaults.uses_guidance_embedding);
  return out;
}

}  // namespace ditserve::config
