#include "tools/make_checkpoint/flux_checkpoint.h"

#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "core/io/safetensors.h"
#include "core/models/flux/flux_transformer_2d_model.h"
#include "core/models/vae/autoencoder_kl.h"
#include "tools/make_checkpoint/text_components.h"

namespace ditserve::tools {
namespace {

// Scale of the noise added to every initialised parameter.
constexpr double kParameterNoise = 0.02;
constexpr char kWeightsFile[] = "diffusion_pytorch_model.safetensors";
// The diffusers version whose folder layout is written.
constexpr char kDiffusersVersion[] = "0.38.0";

models::FluxTransformerConfig TransformerConfig(CheckpointPreset preset,
                                                bool guidance_embeds) {
  models::FluxTransformerConfig config;
  config.patch_size = 1;
  // 16 latent channels x 2x2 packing, as in FLUX.1.
  config.in_channels = 64;
  config.out_channels = 64;
  config.guidance_embeds = guidance_embeds;
  if (preset == CheckpointPreset::kTiny) {
    config.num_layers = 2;
    config.num_single_layers = 2;
    config.num_attention_heads = 4;
    config.attention_head_dim = 16;
    config.axes_dims_rope = {4, 6, 6};
    config.joint_attention_dim = 32;
    config.pooled_projection_dim = 32;
  } else {
    config.num_layers = 2;
    config.num_single_layers = 4;
    config.num_attention_heads = 8;
    config.attention_head_dim = 32;
    // FLUX.1's 16/56/56 split of 128 channels, scaled to 32.
    config.axes_dims_rope = {4, 14, 14};
    config.joint_attention_dim = 128;
    config.pooled_projection_dim = 64;
  }
  return config;
}

models::AutoencoderKLConfig VaeConfig(CheckpointPreset preset) {
  models::AutoencoderKLConfig config;
  config.latent_channels = 16;
  // Four levels: the real scale factor 8.
  config.block_out_channels = preset == CheckpointPreset::kTiny
                                  ? std::vector<int64_t>{16, 16, 32, 32}
                                  : std::vector<int64_t>{32, 64, 64, 64};
  config.down_block_types.assign(4, "DownEncoderBlock2D");
  config.up_block_types.assign(4, "UpDecoderBlock2D");
  config.layers_per_block = 1;
  config.norm_num_groups = 8;
  config.sample_size = 1024;
  // FLUX.1's VAE latent statistics.
  config.scaling_factor = 0.3611;
  config.shift_factor = 0.1159;
  config.use_quant_conv = false;
  config.use_post_quant_conv = false;
  return config;
}

nlohmann::json SchedulerJson(const schedulers::FlowMatchEulerConfig& config) {
  return {
      {"_class_name", "FlowMatchEulerDiscreteScheduler"},
      {"_diffusers_version", kDiffusersVersion},
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

nlohmann::json ModelIndexJson() {
  const nlohmann::json absent = {nullptr, nullptr};
  return {
      {"_class_name", "FluxPipeline"},
      {"_diffusers_version", kDiffusersVersion},
      {"scheduler", {"diffusers", "FlowMatchEulerDiscreteScheduler"}},
      {"transformer", {"diffusers", "FluxTransformer2DModel"}},
      {"vae", {"diffusers", "AutoencoderKL"}},
      {"text_encoder", absent},
      {"text_encoder_2", absent},
      {"tokenizer", absent},
      {"tokenizer_2", absent},
  };
}

absl::Status WriteJson(const std::filesystem::path& path,
                       const nlohmann::json& json) {
  std::ofstream out(path);
  out << json.dump(2) << "\n";
  out.close();
  if (!out) {
    return absl::InternalError(absl::StrCat("cannot write ", path.string()));
  }
  return absl::OkStatus();
}

// The module's parameters after the seeded noise, by diffusers name.
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

// component_dir/config.json and its weights.
absl::Status WriteComponent(const std::filesystem::path& component_dir,
                            nlohmann::json config, torch::nn::Module& module) {
  std::error_code error;
  std::filesystem::create_directories(component_dir, error);
  if (error) {
    return absl::InternalError(absl::StrCat(
        "cannot create ", component_dir.string(), ": ", error.message()));
  }
  config["_diffusers_version"] = kDiffusersVersion;
  if (absl::Status status = WriteJson(component_dir / "config.json", config);
      !status.ok()) {
    return status;
  }
  return io::WriteSafetensors((component_dir / kWeightsFile).string(),
                              PerturbedWeights(module), {{"format", "pt"}});
}

}  // namespace

absl::StatusOr<CheckpointPreset> ParseCheckpointPreset(absl::string_view name) {
  if (name == "tiny") return CheckpointPreset::kTiny;
  if (name == "small") return CheckpointPreset::kSmall;
  return absl::InvalidArgumentError(absl::StrCat(
      "preset \"", name, "\" is not known; expected tiny or small"));
}

absl::StatusOr<FluxCheckpointConfigs> FluxPresetConfigs(
    config::ModelFamily family, CheckpointPreset preset) {
  if (family != config::ModelFamily::kFluxDev &&
      family != config::ModelFamily::kFluxSchnell) {
    return absl::InvalidArgumentError(
        absl::StrCat("family ", config::ModelFamilyName(family),
                     " is not a FLUX family; expected flux-dev or "
                     "flux-schnell"));
  }
  const config::FamilyDefaults& defaults = config::DefaultsFor(family);
  FluxCheckpointConfigs configs;
  configs.transformer =
      TransformerConfig(preset, defaults.uses_guidance_embedding);
  configs.vae = VaeConfig(preset);
  configs.scheduler.shift = defaults.scheduler_shift;
  configs.scheduler.use_dynamic_shifting = defaults.scheduler_dynamic_shift;
  return configs;
}

absl::Status WriteFluxCheckpoint(config::ModelFamily family,
                                 CheckpointPreset preset, uint64_t seed,
                                 const std::string& out_dir) {
  absl::StatusOr<FluxCheckpointConfigs> configs =
      FluxPresetConfigs(family, preset);
  if (!configs.ok()) return configs.status();
  const std::filesystem::path root(out_dir);
  try {
    torch::manual_seed(seed);
    absl::StatusOr<std::shared_ptr<models::FluxTransformer2DModel>>
        transformer = models::FluxTransformer2DModel::Create(
            configs->transformer, /*attention=*/nullptr,
            models::FluxBlockRange::All(configs->transformer));
    if (!transformer.ok()) return transformer.status();
    if (absl::Status status =
            WriteComponent(root / "transformer",
                           models::ToJson(configs->transformer), **transformer);
        !status.ok()) {
      return status;
    }
    models::AutoencoderKL vae(configs->vae);
    if (absl::Status status =
            WriteComponent(root / "vae", models::ToJson(configs->vae), vae);
        !status.ok()) {
      return status;
    }
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("initialising weights for ", out_dir, ": ", e.what()));
  }
  std::error_code error;
  std::filesystem::create_directories(root / "scheduler", error);
  if (error) {
    return absl::InternalError(absl::StrCat("cannot create ",
                                            (root / "scheduler").string(), ": ",
                                            error.message()));
  }
  if (absl::Status status =
          WriteJson(root / "scheduler" / "scheduler_config.json",
                    SchedulerJson(configs->scheduler));
      !status.ok()) {
    return status;
  }
  if (absl::Status status =
          WriteJson(root / "model_index.json", ModelIndexJson());
      !status.ok()) {
    return status;
  }
  return WriteFluxTextComponents(
      preset, seed, configs->transformer.joint_attention_dim,
      configs->transformer.pooled_projection_dim, out_dir);
}

}  // namespace ditserve::tools
