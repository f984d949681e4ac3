#ifndef DITSERVE_TOOLS_GOLDEN_CHECK_RUNNERS_H_
#define DITSERVE_TOOLS_GOLDEN_CHECK_RUNNERS_H_

// The runners golden-check dispatches to, by case.json "kind". A runner
// rebuilds what the case describes, runs it on the case's inputs and compares
// every stored output (see tolerance_check.h). To add one: define it in its
// own file, declare it here and add one line to the table in runners.cc.

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

// diffusers FLUX transformer, VAE decoder and FLUX pipeline
// (flux_transformer_runner.cc, autoencoder_kl_runner.cc,
// flux_pipeline_runner.cc).
absl::StatusOr<std::vector<OutputComparison>> RunFluxTransformerCase(
    const GoldenCase& golden_case);
absl::StatusOr<std::vector<OutputComparison>> RunAutoencoderKLCase(
    const GoldenCase& golden_case);
absl::StatusOr<std::vector<OutputComparison>> RunFluxPipelineCase(
    const GoldenCase& golden_case);

// diffusers PixArt and SD3 transformers and pipelines (pixart_runner.cc,
// sd3_runner.cc).
absl::StatusOr<std::vector<OutputComparison>> RunPixArtTransformerCase(
    const GoldenCase& golden_case);
absl::StatusOr<std::vector<OutputComparison>> RunPixArtPipelineCase(
    const GoldenCase& golden_case);
absl::StatusOr<std::vector<OutputComparison>> RunSD3TransformerCase(
    const GoldenCase& golden_case);
absl::StatusOr<std::vector<OutputComparison>> RunSD3PipelineCase(
    const GoldenCase& golden_case);

// nullptr for a kind no runner handles.
const RunnerEntry* FindRunner(absl::string_view kind);

// Every registered kind, for error messages.
std::vector<absl::string_view> RegisteredKinds();

}  // namespace ditserve::golden

#endif  // DITSERVE_TOOLS_GOLDEN_CHECK_RUNNERS_H_
