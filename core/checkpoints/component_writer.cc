#include "core/checkpoints/component_writer.h"

#include <torch/torch.h>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/checkpoints/json_output.h"

namespace ditserve::checkpoints {
namespace {

// Scale of the noise added to every initialised parameter.
constexpr double kParameterNoise = 0.02;
constexpr char kDiffusersWeightsFile[] = "diffusion_pytorch_model.safetensors";

}  // namespace

absl::StatusOr<CheckpointPreset> ParseCheckpointPreset(absl::string_view name) {
  if (name == "tiny") return CheckpointPreset::kTiny;
  if (name == "small") return CheckpointPreset::kSmall;
  return absl::InvalidArgumentError(absl::StrCat(
      "preset \"", name, "\" is not known; expected tiny or small"));
}

absl::string_view CheckpointPresetName(CheckpointPreset preset) {
  return preset == CheckpointPreset::kTiny ? "tiny" : "small";
}

io::TensorMap PerturbedWeights(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  io::TensorMap weights;
  for (const auto& parameter : module.named_parameters()) {
    parameter.value().add_(torch::randn_like(parameter.value()) *
                           kParameterNoise);
    weights[parameter.key()] = parameter.value();
  }
  return weights;
}

absl::Status WriteComponentFolder(const std::filesystem::path& dir,
                                  const nlohmann::json& config,
                                  const io::TensorMap& weights,
                                  absl::string_view weights_file) {
  RETURN_IF_ERROR(CreateFolder(dir));
  RETURN_IF_ERROR(WriteJsonFile(dir / "config.json", config));
  return io::WriteSafetensors((dir / std::string(weights_file)).string(),
                              weights, {{"format", "pt"}});
}

absl::Status WriteDiffusersComponent(const std::filesystem::path& dir,
                                     nlohmann::json config,
                                     const io::TensorMap& weights) {
  config["_diffusers_version"] = kDiffusersVersion;
  return WriteComponentFolder(dir, config, weights, kDiffusersWeightsFile);
}

models::AutoencoderKLConfig VaeConfig(CheckpointPreset preset,
                                      const VaeLatents& latents) {
  models::AutoencoderKLConfig config;
  config.latent_channels = latents.channels;
  // Four levels: the real scale factor 8.
  config.block_out_channels = preset == CheckpointPreset::kTiny
                                  ? std::vector<int64_t>{16, 16, 32, 32}
                                  : std::vector<int64_t>{32, 64, 64, 64};
  config.down_block_types.assign(4, "DownEncoderBlock2D");
  config.up_block_types.assign(4, "UpDecoderBlock2D");
  config.layers_per_block = 1;
  config.norm_num_groups = 8;
  config.sample_size = 1024;
  config.scaling_factor = latents.scaling_factor;
  config.shift_factor = latents.shift_factor;
  config.use_quant_conv = latents.quant_convs;
  config.use_post_quant_conv = latents.quant_convs;
  return config;
}

nlohmann::json FlowMatchSchedulerJson(
    const schedulers::FlowMatchEulerConfig& config) {
  return {
      {"_class_name", "FlowMatchEulerDiscreteScheduler"},
      {"num_train_timesteps", config.num_train_timesteps},
      {"shift", config.shift},
      {"use_dynamic_shifting", config.use_dynamic_shifting},
      {"base_shift", config.base_shift},
      {"max_shift", config.max_shift},
      {"base_image_seq_len", config.base_image_seq_len},
      {"max_image_seq_len", config.max_image_seq_len},
      {"time_shift_type", config.time_shift_type},
      {"shift_terminal", nullptr},
      {"invert_sigmas", config.invert_sigmas},
      {"stochastic_sampling", false},
      {"use_beta_sigmas", false},
      {"use_exponential_sigmas", false},
      {"use_karras_sigmas", false},
  };
}

absl::Status WriteSchedulerConfig(const std::filesystem::path& root,
                                  nlohmann::json config) {
  config["_diffusers_version"] = kDiffusersVersion;
  RETURN_IF_ERROR(CreateFolder(root / "scheduler"));
  return WriteJsonFile(root / "scheduler" / "scheduler_config.json", config);
}

absl::Status WriteModelIndex(const std::filesystem::path& root,
                             absl::string_view pipeline_class,
                             const nlohmann::json& components) {
  nlohmann::json index = components;
  index["_class_name"] = pipeline_class;
  index["_diffusers_version"] = kDiffusersVersion;
  return WriteJsonFile(root / "model_index.json", index);
}

}  // namespace ditserve::checkpoints
