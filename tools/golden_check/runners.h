#ifndef DITSERVE_TOOLS_GOLDEN_CHECK_RUNNERS_H_
#define DITSERVE_TOOLS_GOLDEN_CHECK_RUNNERS_H_

// The runners golden-check dispatches to, by case.json "kind". A runner
// rebuilds what the case describes, runs it on the case's inputs and compares
// every stored output (see tolerance_check.h). To add one: define it in its
// own file, declare it here and add one line to the table in runners.cc.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/golden_check/golden_case.h"
#include "tools/golden_check/tolerance_check.h"

namespace ditserve::golden {

using CaseRunner = absl::StatusOr<std::vector<OutputComparison>> (*)(
    const GoldenCase& golden_case);

struct RunnerEntry {
  const char* kind;
  CaseRunner run;
};

// Scheduler schedules and step chains (scheduler_runner.cc).
absl::StatusOr<std::vector<OutputComparison>> RunSchedulerCase(
    const GoldenCase& golden_case);

// diffusers' CogVideoX schedulers, stepped as CogVideoXPipeline steps them
// (cogvideox_scheduler_runner.cc).
absl::StatusOr<std::vector<OutputComparison>> RunCogVideoXDDIMSchedulerCase(
    const GoldenCase& golden_case);
absl::StatusOr<std::vector<OutputComparison>> RunCogVideoXDPMSchedulerCase(
    const GoldenCase& golden_case);

// transformers text encoders (text_encoder_runner.cc).
absl::StatusOr<std::vector<OutputComparison>> RunT5EncoderCase(
    const GoldenCase& golden_case);
absl::StatusOr<std::vector<OutputComparison>> RunCLIPTextModelCase(
    const GoldenCase& golden_case);
absl::StatusOr<std::vector<OutputComparison>>
RunCLIPTextModelWithProjectionCase(const GoldenCase& golden_case);

// Tokenizer id lists (tokenizer_runner.cc).
absl::StatusOr<std::vector<OutputComparison>> RunT5TokenizerCase(
    const GoldenCase& golden_case);
absl::StatusOr<std::vector<OutputComparison>> RunCLIPTokenizerCase(
    const GoldenCase& golden_case);

// diffusers FLUX transformer and VAE decoder (flux_transformer_runner.cc,
// autoencoder_kl_runner.cc).
absl::StatusOr<std::vector<OutputComparison>> RunFluxTransformerCase(
    const GoldenCase& golden_case);
absl::StatusOr<std::vector<OutputComparison>> RunAutoencoderKLCase(
    const GoldenCase& golden_case);

// diffusers CogVideoX VAE decoder (cogvideox_vae_runner.cc).
absl::StatusOr<std::vector<OutputComparison>> RunCogVideoXVaeCase(
    const GoldenCase& golden_case);

// diffusers PixArt and SD3 transformers (pixart_runner.cc, sd3_runner.cc).
absl::StatusOr<std::vector<OutputComparison>> RunPixArtTransformerCase(
    const GoldenCase& golden_case);
absl::StatusOr<std::vector<OutputComparison>> RunSD3TransformerCase(
    const GoldenCase& golden_case);

// diffusers CogVideoXTransformer3DModel (cogvideox_transformer_runner.cc).
absl::StatusOr<std::vector<OutputComparison>> RunCogVideoXTransformerCase(
    const GoldenCase& golden_case);

// Kinds "diffusers.<pipeline class>" of the registered families' pipelines
// run through the family and the engine's denoise loop (pipeline_runner.cc).
inline constexpr char kPipelineKindPrefix[] = "diffusers.";
absl::StatusOr<std::vector<OutputComparison>> RunPipelineCase(
    const GoldenCase& golden_case);
std::vector<std::string> RegisteredPipelineKinds();

// nullptr for a kind no runner handles.
const RunnerEntry* FindRunner(absl::string_view kind);

// Every registered kind, for error messages.
std::vector<absl::string_view> RegisteredKinds();

}  // namespace ditserve::golden

#endif  // DITSERVE_TOOLS_GOLDEN_CHECK_RUNNERS_H_
