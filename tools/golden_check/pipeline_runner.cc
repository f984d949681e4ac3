// Golden cases of every registered family's diffusers pipeline, through the
// family and the engine's denoise loop: from prompt embeddings, or (when
// case.json lists `prompt` strings) from text through the checkpoint's
// tokenizers and encoders (their ids and outputs compared too); the schedule,
// every denoise step's noise prediction and latents from the case's starting
// latents, and the decoded image in each output form. float32 on the CPU or
// --device.

#include <torch/torch.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/engine/denoise_loop.h"
#include "core/engine/family_registry.h"
#include "core/parallel/local_attention.h"
#include "core/schedulers/dpm_solver_multistep.h"
#include "core/schedulers/flow_match_euler.h"
#include "tools/golden_check/runners.h"

namespace ditserve::golden {
namespace {

// The input `name`, or undefined when the inputs file has none.
at::Tensor OptionalInput(const io::TensorMap& inputs, const std::string& name) {
  auto it = inputs.find(name);
  return it == inputs.end() ? at::Tensor() : it->second;
}

// The conditioning stored under `prefix`prompt_embeds and its companions.
absl::StatusOr<families::Conditioning> ReadConditioning(
    const GoldenCase& golden_case, const io::TensorMap& inputs,
    const std::string& prefix) {
  families::Conditioning conditioning{
      .states = OptionalInput(inputs, prefix + "prompt_embeds"),
      .pooled = OptionalInput(inputs, prefix + "pooled_prompt_embeds"),
      .mask = OptionalInput(inputs, prefix + "prompt_attention_mask")};
  if (!conditioning.states.defined()) {
    return absl::InvalidArgumentError(
        absl::StrCat(golden_case.dir, ": the inputs file has no \"", prefix,
                     "prompt_embeds\""));
  }
  return conditioning;
}

// The case's prompts through the model's encoders; what they produced goes
// into `outputs` for comparison.
absl::StatusOr<families::Conditioning> EncodeCasePrompts(
    const GoldenCase& golden_case, families::FamilyModel& model,
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
  torch::NoGradGuard no_grad;
  ASSIGN_OR_RETURN(families::Conditioning conditioning,
                   model.EncodePrompts(prompts, max_sequence_length));
  for (const auto& [name, ids] : conditioning.token_ids) outputs[name] = ids;
  outputs["prompt_embeds"] = conditioning.states;
  if (conditioning.pooled.defined()) {
    outputs["pooled_prompt_embeds"] = conditioning.pooled;
  }
  if (conditioning.mask.defined()) {
    outputs["prompt_attention_mask"] = conditioning.mask;
  }
  return conditioning;
}

absl::StatusOr<families::GenerationRequest> ReadRequest(
    const GoldenCase& golden_case, const io::TensorMap& inputs,
    families::FamilyModel& model, io::TensorMap& outputs) {
  families::GenerationRequest request;
  if (golden_case.spec.contains("prompt")) {
    ASSIGN_OR_RETURN(request.prompt,
                     EncodeCasePrompts(golden_case, model, outputs));
  } else {
    ASSIGN_OR_RETURN(request.prompt, ReadConditioning(golden_case, inputs, ""));
  }
  if (inputs.count("negative_prompt_embeds") > 0) {
    ASSIGN_OR_RETURN(request.negative_prompt,
                     ReadConditioning(golden_case, inputs, "negative_"));
  }
  try {
    request.height = golden_case.spec.at("height").get<int64_t>();
    request.width = golden_case.spec.at("width").get<int64_t>();
    request.num_inference_steps =
        golden_case.spec.at("num_inference_steps").get<int>();
    request.guidance_scale = golden_case.spec.at("guidance_scale").get<float>();
    request.seeds = {golden_case.spec.at("generator_seed").get<uint64_t>()};
    request.frames = golden_case.spec.value("num_frames", int64_t{1});
    request.dynamic_cfg = golden_case.spec.value("use_dynamic_cfg", false);
    // The case gave the latents and a generator of its own seed, which only
    // the scheduler's noise drew from.
    if (golden_case.spec.contains("scheduler_noise_generator_seed")) {
      request.step_noise_seeds = {
          golden_case.spec.at("scheduler_noise_generator_seed")
              .get<uint64_t>()};
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(golden_case.dir, "/case.json: ", e.what()));
  }
  return request;
}

// The schedule's timesteps and, where the scheduler has them, sigmas.
void RecordSchedule(const schedulers::Scheduler& scheduler,
                    io::TensorMap& outputs) {
  outputs["timesteps"] = scheduler.timesteps();
  if (const auto* flow =
          dynamic_cast<const schedulers::FlowMatchEulerDiscreteScheduler*>(
              &scheduler)) {
    outputs["sigmas"] = flow->sigmas();
  } else if (const auto* dpm =
                 dynamic_cast<const schedulers::DPMSolverMultistepScheduler*>(
                     &scheduler)) {
    outputs["sigmas"] = dpm->sigmas();
  }
}

// The registered family that runs the diffusers pipeline class of `kind`
// ("diffusers.FluxPipeline").
absl::StatusOr<const families::Family*> FamilyRunning(const std::string& kind) {
  for (const families::Family* family : engine::RegisteredFamilies()) {
    for (const std::string& pipeline_class : family->pipeline_classes()) {
      if (kind == kPipelineKindPrefix + pipeline_class) return family;
    }
  }
  return absl::NotFoundError(
      absl::StrCat("no registered family runs the pipeline of ", kind));
}

}  // namespace

absl::StatusOr<std::vector<OutputComparison>> RunPipelineCase(
    const GoldenCase& golden_case) {
  ASSIGN_OR_RETURN(const families::Family* family,
                   FamilyRunning(golden_case.kind));
  ASSIGN_OR_RETURN(
      io::TensorMap inputs,
      golden_case.ReadModelInputs("inputs_file", "inputs.safetensors"));
  ASSIGN_OR_RETURN(at::Tensor latents,
                   RequireTensor(golden_case, inputs, "latents"));
  families::LoadOptions options;
  options.attention = std::make_shared<parallel::LocalAttention>();
  options.prompt_encoders = golden_case.spec.contains("prompt");
  options.placement = golden_case.placement;
  ASSIGN_OR_RETURN(std::unique_ptr<families::FamilyModel> model,
                   family->Load(golden_case.dir, options));
  io::TensorMap outputs;
  ASSIGN_OR_RETURN(families::GenerationRequest request,
                   ReadRequest(golden_case, inputs, *model, outputs));
  ASSIGN_OR_RETURN(std::unique_ptr<schedulers::Scheduler> schedule,
                   model->Schedule(request));
  RecordSchedule(*schedule, outputs);
  ASSIGN_OR_RETURN(auto tables, model->RequestTables(request));
  for (auto& [name, table] : tables) outputs[name] = std::move(table);
  ASSIGN_OR_RETURN(
      at::Tensor final_latents,
      engine::Denoise(
          *model, request, latents, [&outputs](const engine::StepEvent& event) {
            const std::string step = absl::StrCat("step.", event.step, ".");
            outputs[step + "noise_pred"] = event.noise_pred;
            outputs[step + "latents"] = event.latents;
            return absl::OkStatus();
          }));
  outputs["latents_final"] = final_latents;
  ASSIGN_OR_RETURN(
      families::DecodeOutput decoded,
      model->Decode(model->UnpackLatents(final_latents, request),
                    families::DecodeRequest{.height = request.height,
                                            .width = request.width,
                                            .frames = request.frames}));
  outputs["vae_input"] = decoded.vae_input;
  // diffusers names a video pipeline's outputs "frames".
  const std::string output = request.frames > 1 ? "frames" : "image";
  outputs[output + "_raw"] = decoded.images.raw;
  outputs[output] = decoded.images.image;
  outputs[output + "_uint8"] = decoded.images.rgb;
  return CompareWithReferenceOutputs(golden_case, outputs);
}

std::vector<std::string> RegisteredPipelineKinds() {
  std::vector<std::string> kinds;
  for (const families::Family* family : engine::RegisteredFamilies()) {
    for (const std::string& pipeline_class : family->pipeline_classes()) {
      kinds.push_back(kPipelineKindPrefix + pipeline_class);
    }
  }
  return kinds;
}

}  // namespace ditserve::golden
