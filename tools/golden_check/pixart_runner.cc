// Golden cases of diffusers' PixArtTransformer2DModel (α with its
// micro-conditions, Σ without) and PixArtSigmaPipeline from prompt embeddings
// (schedule, every denoise step with guidance, the decoded image in each
// output form), CPU float32.

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/models/pixart/pixart_transformer_2d_model.h"
#include "core/parallel/local_attention.h"
#include "core/pipelines/pixart/pixart_pipeline.h"
#include "core/schedulers/dpm_solver_multistep.h"
#include "tools/golden_check/runners.h"

namespace ditserve::golden {
namespace {

absl::StatusOr<at::Tensor> RequireInput(const GoldenCase& golden_case,
                                        const io::TensorMap& inputs,
                                        const std::string& name) {
  auto it = inputs.find(name);
  if (it == inputs.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        golden_case.dir, ": the inputs file has no \"", name, "\""));
  }
  return it->second;
}

absl::StatusOr<pipelines::PixArtRequest> ReadRequest(
    const GoldenCase& golden_case, const io::TensorMap& inputs) {
  pipelines::PixArtRequest request;
  for (auto [name, target] :
       {std::pair{"prompt_embeds", &request.prompt_embeds},
        std::pair{"prompt_attention_mask", &request.prompt_attention_mask},
        std::pair{"negative_prompt_embeds", &request.negative_prompt_embeds},
        std::pair{"negative_prompt_attention_mask",
                  &request.negative_prompt_attention_mask}}) {
    ASSIGN_OR_RETURN(at::Tensor tensor,
                     RequireInput(golden_case, inputs, name));
    *target = tensor;
  }
  try {
    request.height = golden_case.spec.at("height").get<int64_t>();
    request.width = golden_case.spec.at("width").get<int64_t>();
    request.num_inference_steps =
        golden_case.spec.at("num_inference_steps").get<int>();
    request.guidance_scale = golden_case.spec.at("guidance_scale").get<float>();
    request.seeds = {golden_case.spec.at("generator_seed").get<uint64_t>()};
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(golden_case.dir, "/case.json: ", e.what()));
  }
  return request;
}

}  // namespace

absl::StatusOr<std::vector<OutputComparison>> RunPixArtTransformerCase(
    const GoldenCase& golden_case) {
  ASSIGN_OR_RETURN(
      io::TensorMap inputs,
      golden_case.ReadTensors("inputs_file", "inputs.safetensors"));
  models::PixArtTransformerInputs forward_inputs;
  for (auto [name, target] :
       {std::pair{"hidden_states", &forward_inputs.hidden_states},
        std::pair{"encoder_hidden_states",
                  &forward_inputs.encoder_hidden_states},
        std::pair{"timestep", &forward_inputs.timestep}}) {
    ASSIGN_OR_RETURN(at::Tensor tensor,
                     RequireInput(golden_case, inputs, name));
    *target = tensor;
  }
  if (auto it = inputs.find("encoder_attention_mask"); it != inputs.end()) {
    forward_inputs.encoder_attention_mask = it->second;
  }
  auto resolution = inputs.find("resolution");
  auto aspect_ratio = inputs.find("aspect_ratio");
  if (resolution != inputs.end() && aspect_ratio != inputs.end()) {
    forward_inputs.micro_conditions =
        models::PixArtMicroConditions{resolution->second, aspect_ratio->second};
  }
  ASSIGN_OR_RETURN(
      std::shared_ptr<models::PixArtTransformer2DModel> model,
      models::LoadPixArtTransformer2DModel(
          golden_case.dir, std::make_shared<parallel::LocalAttention>(),
          models::Placement{}));
  torch::NoGradGuard no_grad;
  ASSIGN_OR_RETURN(at::Tensor sample, model->Forward(forward_inputs));
  return CompareWithReferenceOutputs(golden_case, {{"sample", sample}});
}

absl::StatusOr<std::vector<OutputComparison>> RunPixArtPipelineCase(
    const GoldenCase& golden_case) {
  ASSIGN_OR_RETURN(
      io::TensorMap inputs,
      golden_case.ReadTensors("inputs_file", "inputs.safetensors"));
  ASSIGN_OR_RETURN(pipelines::PixArtRequest request,
                   ReadRequest(golden_case, inputs));
  ASSIGN_OR_RETURN(at::Tensor latents,
                   RequireInput(golden_case, inputs, "latents"));
  ASSIGN_OR_RETURN(
      std::unique_ptr<pipelines::PixArtPipeline> pipeline,
      pipelines::PixArtPipeline::Load(
          golden_case.dir, std::make_shared<parallel::LocalAttention>(),
          models::Placement{}));

  io::TensorMap outputs;
  ASSIGN_OR_RETURN(std::unique_ptr<schedulers::Scheduler> schedule,
                   pipeline->Schedule(request.num_inference_steps));
  outputs["timesteps"] = schedule->timesteps();
  if (const auto* dpm =
          dynamic_cast<const schedulers::DPMSolverMultistepScheduler*>(
              schedule.get())) {
    outputs["sigmas"] = dpm->sigmas();
  }
  ASSIGN_OR_RETURN(
      at::Tensor final_latents,
      pipeline->Denoise(request, latents,
                        [&outputs](const pipelines::PixArtStepEvent& event) {
                          const std::string step =
                              absl::StrCat("step.", event.step, ".");
                          outputs[step + "noise_pred"] = event.noise_pred;
                          outputs[step + "latents"] = event.latents;
                          return absl::OkStatus();
                        }));
  outputs["latents_final"] = final_latents;
  ASSIGN_OR_RETURN(pipelines::PixArtDecodeOutput decoded,
                   pipeline->Decode(final_latents));
  outputs["vae_input"] = decoded.vae_input;
  outputs["image_raw"] = decoded.images.raw;
  outputs["image"] = decoded.images.image;
  outputs["image_uint8"] = decoded.images.rgb;
  return CompareWithReferenceOutputs(golden_case, outputs);
}

}  // namespace ditserve::golden
