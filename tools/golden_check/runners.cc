#include "tools/golden_check/runners.h"

namespace ditserve::golden {
namespace {

constexpr RunnerEntry kRunners[] = {
    {"diffusers.FlowMatchEulerDiscreteScheduler", RunSchedulerCase},
    {"diffusers.DPMSolverMultistepScheduler", RunSchedulerCase},
    {"diffusers.DDIMScheduler", RunSchedulerCase},
    {"transformers.T5EncoderModel", RunT5EncoderCase},
    {"transformers.CLIPTextModel", RunCLIPTextModelCase},
    {"transformers.CLIPTextModelWithProjection",
     RunCLIPTextModelWithProjectionCase},
    {"diffusers.FluxTransformer2DModel", RunFluxTransformerCase},
    {"diffusers.AutoencoderKL", RunAutoencoderKLCase},
    {"diffusers.FluxPipeline", RunFluxPipelineCase},
    {"diffusers.PixArtTransformer2DModel", RunPixArtTransformerCase},
    {"diffusers.PixArtSigmaPipeline", RunPixArtPipelineCase},
    {"diffusers.SD3Transformer2DModel", RunSD3TransformerCase},
    {"diffusers.StableDiffusion3Pipeline", RunSD3PipelineCase},
    {"tokenizer.t5", RunT5TokenizerCase},
    {"tokenizer.clip", RunCLIPTokenizerCase},
};

}  // namespace

const RunnerEntry* FindRunner(absl::string_view kind) {
  for (const RunnerEntry& entry : kRunners) {
    if (kind == entry.kind) return &entry;
  }
  return nullptr;
}

std::vector<absl::string_view> RegisteredKinds() {
  std::vector<absl::string_view> kinds;
  for (const RunnerEntry& entry : kRunners) kinds.push_back(entry.kind);
  return kinds;
}

}  // namespace ditserve::golden
