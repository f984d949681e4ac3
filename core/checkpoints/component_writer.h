#ifndef DITSERVE_CORE_CHECKPOINTS_COMPONENT_WRITER_H_
#define DITSERVE_CORE_CHECKPOINTS_COMPONENT_WRITER_H_

// What every family's random checkpoint writer shares: the size presets,
// seeded weights, component folders, the VAE and the model index.

#include <torch/nn/module.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/io/safetensors.h"
#include "core/models/vae/autoencoder_kl_config.h"
#include "core/schedulers/flow_match_euler.h"
#include "nlohmann/json.hpp"

namespace ditserve::checkpoints {

enum class CheckpointPreset {
  // Seconds per generation on a CPU; the real VAE scale factor 8, 4 heads
  // and 4 blocks so every parallel configuration of up to 4 ranks fits.
  kTiny,
  // Large enough that compute, not overhead, dominates a CPU forward.
  kSmall,
};

// "tiny" / "small"; INVALID_ARGUMENT naming the known presets otherwise.
absl::StatusOr<CheckpointPreset> ParseCheckpointPreset(absl::string_view name);

// The inverse of ParseCheckpointPreset.
absl::string_view CheckpointPresetName(CheckpointPreset preset);

// The diffusers version whose folder layout is written.
inline constexpr char kDiffusersVersion[] = "0.38.0";

// The module's parameters after adding 0.02 N(0, 1) noise from torch's
// global generator, by module path, so no norm or modulation weight is
// trivially 0 or 1.
io::TensorMap PerturbedWeights(torch::nn::Module& module);

// `dir`/config.json and `dir`/`weights_file` (safetensors, format "pt").
absl::Status WriteComponentFolder(const std::filesystem::path& dir,
                                  const nlohmann::json& config,
                                  const io::TensorMap& weights,
                                  absl::string_view weights_file);

// A diffusers component: WriteComponentFolder with _diffusers_version added
// to `config` and the weights in diffusion_pytorch_model.safetensors.
absl::Status WriteDiffusersComponent(const std::filesystem::path& dir,
                                     nlohmann::json config,
                                     const io::TensorMap& weights);

// The VAE of a preset (four levels: the real scale factor 8) for a family's
// latent statistics.
struct VaeLatents {
  int64_t channels = 0;
  double scaling_factor = 0.0;
  std::optional<double> shift_factor;
  // The SD-style VAE of PixArt has quant convs; FLUX's and SD3's do not.
  bool quant_convs = false;
};
models::AutoencoderKLConfig VaeConfig(CheckpointPreset preset,
                                      const VaeLatents& latents);

// A FlowMatchEulerDiscreteScheduler's scheduler_config.json (FLUX, SD3).
nlohmann::json FlowMatchSchedulerJson(
    const schedulers::FlowMatchEulerConfig& config);

// scheduler/scheduler_config.json.
absl::Status WriteSchedulerConfig(const std::filesystem::path& root,
                                  nlohmann::json config);

// model_index.json of `pipeline_class` listing `components` (name →
// [library, class]; [null, null] for one written later).
absl::Status WriteModelIndex(const std::filesystem::path& root,
                             absl::string_view pipeline_class,
                             const nlohmann::json& components);

}  // namespace ditserve::checkpoints

#endif  // DITSERVE_CORE_CHECKPOINTS_COMPONENT_WRITER_H_
