#include "core/config/model_defaults.h"

namespace ditserve::config {

v1::ModelDefaults ToProto(const ModelDefaults& defaults) {
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
  out.set_num_frames(defaults.num_frames);
  out.set_fps(defaults.fps);
  out.set_frame_step(defaults.frame_step);
  out.set_supports_dynamic_cfg(defaults.supports_dynamic_cfg);
  return out;
}

std::ostream& operator<<(std::ostream& out, const ModelDefaults& defaults) {
  return out << defaults.name;
}

}  // namespace ditserve::config
