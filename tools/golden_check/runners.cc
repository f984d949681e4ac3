#include "tools/golden_check/runners.h"

#include <iterator>
#include <string>
#include <vector>

namespace ditserve::golden {
namespace {

constexpr RunnerEntry kRunners[] = {
    {"diffusers.FlowMatchEulerDiscreteScheduler", RunSchedulerCase},
    {"diffusers.DPMSolverMultistepScheduler", RunSchedulerCase},
    {"diffusers.DDIMScheduler", RunSchedulerCase},
    {"diffusers.CogVideoXDDIMScheduler", RunCogVideoXDDIMSchedulerCase},
    {"diffusers.CogVideoXDPMScheduler", RunCogVideoXDPMSchedulerCase},
    {"transformers.T5EncoderModel", RunT5EncoderCase},
    {"transformers.CLIPTextModel", RunCLIPTextModelCase},
    {"transformers.CLIPTextModelWithProjection",
     RunCLIPTextModelWithProjectionCase},
    {"diffusers.FluxTransformer2DModel", RunFluxTransformerCase},
    {"diffusers.AutoencoderKL", RunAutoencoderKLCase},
    {"diffusers.AutoencoderKLCogVideoX", RunCogVideoXVaeCase},
    {"diffusers.PixArtTransformer2DModel", RunPixArtTransformerCase},
    {"diffusers.SD3Transformer2DModel", RunSD3TransformerCase},
    {"diffusers.CogVideoXTransformer3DModel", RunCogVideoXTransformerCase},
    {"tokenizer.t5", RunT5TokenizerCase},
    {"tokenizer.clip", RunCLIPTokenizerCase},
};

// kRunners, then one entry per registered family pipeline.
const std::vector<RunnerEntry>& AllRunners() {
  static const std::vector<std::string>* const pipeline_kinds =
      new std::vector<std::string>(RegisteredPipelineKinds());
  static const std::vector<RunnerEntry>* const runners = [] {
    auto* all =
        new std::vector<RunnerEntry>(std::begin(kRunners), std::end(kRunners));
    for (const std::string& kind : *pipeline_kinds) {
      all->push_back({kind.c_str(), RunPipelineCase});
    }
    return all;
  }();
  return *runners;
}

}  // namespace

const RunnerEntry* FindRunner(absl::string_view kind) {
  for (const RunnerEntry& entry : AllRunners()) {
    if (kind == entry.kind) return &entry;
  }
  return nullptr;
}

std::vector<absl::string_view> RegisteredKinds() {
  std::vector<absl::string_view> kinds;
  for (const RunnerEntry& entry : AllRunners()) kinds.push_back(entry.kind);
  return kinds;
}

}  // namespace ditserve::golden
