// Golden cases of diffusers' FluxPipeline, from prompt embeddings or (when
// case.json lists `prompt` strings) from text through the checkpoint's
// tokenizers and encoders: the encoder inputs and outputs, the denoise loop
// from the case's starting latents (every step's noise prediction and
// latents), the schedule, and the decoded image in each output form.

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/parallel/local_attention.h"
#include "core/pipelines/flux/flux_pipeline.h"
#include "core/pipelines/text/flux_prompt_encoder.h"
#include "tools/golden_check/runners.h"

namespace ditserve::golden {
namespace {

// The embeddings of the case's `prompt` strings, from the pipeline folder's
// text encoders; what they produced goes into `outputs` for comparison.
absl::Status EncodePrompts(const GoldenCase& golden_case,
                           pipelines::FluxRequest& request,
                           io::TensorMap& outputs) {
  std::vector<std::string> prompts;
  int max_sequence_length = 0;
  try {
    prompts = golden_case.spec.at("prompt").get<std::vector<std::string>>();
    max_sequence_length = golden_case.spec.at("max_sequence_length").get<int>();
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(golden_case.dir, "/case.json: ", e.what()));
  }
  ASSIGN_OR_RETURN(
      std::unique_ptr<pipelines::FluxPromptEncoder> encoder,
      pipelines::FluxPromptEncoder::Load(golden_case.dir, models::Placement{}));
  torch::NoGradGuard no_grad;
  ASSIGN_OR_RETURN(pipelines::FluxPromptEmbeddings embeddings,
                   encoder->Encode(prompts, max_sequence_length));
  request.prompt_embeds = embeddings.prompt_embeds;
  request.pooled_prompt_embeds = embeddings.pooled_prompt_embeds;
  outputs["clip_input_ids"] = embeddings.clip_input_ids;
  outputs["t5_input_ids"] = embeddings.t5_input_ids;
  outputs["prompt_embeds"] = embeddings.prompt_embeds;
  outputs["pooled_prompt_embeds"] = embeddings.pooled_prompt_embeds;
  return absl::OkStatus();
}

absl::Status ReadPromptEmbeddings(const GoldenCase& golden_case,
                                  const io::TensorMap& inputs,
                                  pipelines::FluxRequest& request) {
  for (auto [name, target] :
       {std::pair{"prompt_embeds", &request.prompt_embeds},
        std::pair{"pooled_prompt_embeds", &request.pooled_prompt_embeds}}) {
    auto it = inputs.find(name);
    if (it == inputs.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          golden_case.dir, ": the inputs file has no \"", name, "\""));
    }
    *target = it->second;
  }
  return absl::OkStatus();
}

absl::StatusOr<pipelines::FluxRequest> ReadRequest(
    const GoldenCase& golden_case, const io::TensorMap& inputs,
    io::TensorMap& outputs) {
  pipelines::FluxRequest request;
  const absl::Status embedded =
      golden_case.spec.contains("prompt")
          ? EncodePrompts(golden_case, request, outputs)
          : ReadPromptEmbeddings(golden_case, inputs, request);
  if (!embedded.ok()) return embedded;
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

absl::StatusOr<std::vector<OutputComparison>> RunFluxPipelineCase(
    const GoldenCase& golden_case) {
  ASSIGN_OR_RETURN(
      io::TensorMap inputs,
      golden_case.ReadTensors("inputs_file", "inputs.safetensors"));
  io::TensorMap outputs;
  ASSIGN_OR_RETURN(pipelines::FluxRequest request,
                   ReadRequest(golden_case, inputs, outputs));
  auto latents = inputs.find("latents");
  if (latents == inputs.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(golden_case.dir, ": the inputs file has no \"latents\""));
  }
  ASSIGN_OR_RETURN(
      std::unique_ptr<pipelines::FluxPipeline> pipeline,
      pipelines::FluxPipeline::Load(
          golden_case.dir, std::make_shared<parallel::LocalAttention>(),
          models::Placement{}));

  ASSIGN_OR_RETURN(schedulers::FlowMatchEulerDiscreteScheduler schedule,
                   pipeline->Schedule(request.height, request.width,
                                      request.num_inference_steps));
  outputs["timesteps"] = schedule.timesteps();
  outputs["sigmas"] = schedule.sigmas();
  ASSIGN_OR_RETURN(
      at::Tensor final_latents,
      pipeline->Denoise(request, latents->second,
                        [&outputs](const pipelines::FluxStepEvent& event) {
                          const std::string step =
                              absl::StrCat("step.", event.step, ".");
                          outputs[step + "noise_pred"] = event.noise_pred;
                          outputs[step + "latents"] = event.latents;
                          return absl::OkStatus();
                        }));
  outputs["latents_final"] = final_latents;
  ASSIGN_OR_RETURN(
      pipelines::FluxDecodeOutput decoded,
      pipeline->Decode(final_latents, request.height, request.width));
  outputs["vae_input"] = decoded.vae_input;
  outputs["image_raw"] = decoded.images.raw;
  outputs["image"] = decoded.images.image;
  outputs["image_uint8"] = decoded.images.rgb;
  return CompareWithReferenceOutputs(golden_case, outputs);
}

}  // namespace ditserve::golden
