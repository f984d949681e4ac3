// ditserve-bench-flux: milliseconds per FLUX transformer forward and per full
// 4-step generation (denoise + VAE decode) of a random `small` checkpoint, at
// several resolutions and intra-op thread counts. Prints one JSON document.
//
//   ditserve-bench-flux [--resolutions 256,512] [--threads 1,2] [--repeats 3]
//                       [--checkpoint DIR]
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "bench/positive_list.h"
#include "core/base/allocator_tuning.h"
#include "core/base/openmp_wait_policy.h"
#include "core/engine/compute_threads.h"
#include "core/engine/denoise_loop.h"
#include "core/families/flux/flux_checkpoint.h"
#include "core/families/flux/flux_defaults.h"
#include "core/families/flux/flux_family.h"
#include "core/families/flux/flux_transformer_config.h"
#include "core/parallel/local_attention.h"
#include "nlohmann/json.hpp"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::vector<std::string>, resolutions,
          (std::vector<std::string>{"256", "512"}),
          "square image sizes in pixels, comma separated");
ABSL_FLAG(std::vector<std::string>, threads,
          (std::vector<std::string>{"1", "2"}),
          "intra-op thread counts, comma separated");
ABSL_FLAG(int, repeats, 3, "timed runs per measurement (after one warm-up)");
ABSL_FLAG(std::string, checkpoint, "",
          "FLUX checkpoint folder; empty = a random flux-dev `small` one "
          "written to a temporary folder");

namespace ditserve::bench {
namespace {

// The benchmark's generation: FLUX.1-schnell's step count.
constexpr int kGenerationSteps = 4;
constexpr int64_t kTextTokens = 64;

// Milliseconds of `repeats` runs of `body` after one untimed warm-up.
absl::StatusOr<nlohmann::json> Time(int repeats,
                                    const std::function<absl::Status()>& body) {
  if (absl::Status status = body(); !status.ok()) return status;
  std::vector<double> milliseconds;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (absl::Status status = body(); !status.ok()) return status;
    milliseconds.push_back(std::chrono::duration<double, std::milli>(
                               std::chrono::steady_clock::now() - start)
                               .count());
  }
  std::sort(milliseconds.begin(), milliseconds.end());
  return nlohmann::json{{"median", milliseconds[milliseconds.size() / 2]},
                        {"min", milliseconds.front()},
                        {"max", milliseconds.back()},
                        {"runs", milliseconds.size()}};
}

families::GenerationRequest Request(families::FamilyModel& model,
                                    const models::FluxTransformerConfig& config,
                                    int64_t size) {
  families::GenerationRequest request;
  request.prompt.states =
      torch::randn({1, kTextTokens, config.joint_attention_dim});
  request.prompt.pooled = torch::randn({1, config.pooled_projection_dim});
  request.height = size;
  request.width = size;
  request.num_inference_steps = kGenerationSteps;
  request.guidance_scale = 3.5F;
  request.seeds = {0};
  return request;
}

// One transformer forward on the generation's first-step inputs.
absl::Status TransformerForward(families::FamilyModel& model,
                                const families::GenerationRequest& request,
                                const at::Tensor& latents) {
  torch::NoGradGuard no_grad;
  absl::StatusOr<std::unique_ptr<families::BoundForward>> forward =
      model.BindForward(request, latents, torch::scalar_tensor(1000.0),
                        request.prompt);
  if (!forward.ok()) return forward.status();
  return (*forward)->Whole().status();
}

absl::StatusOr<nlohmann::json> Run() {
  absl::StatusOr<std::vector<int64_t>> sizes =
      ParsePositiveList(absl::GetFlag(FLAGS_resolutions), "resolutions");
  if (!sizes.ok()) return sizes.status();
  absl::StatusOr<std::vector<int64_t>> thread_counts =
      ParsePositiveList(absl::GetFlag(FLAGS_threads), "threads");
  if (!thread_counts.ok()) return thread_counts.status();
  std::string dir = absl::GetFlag(FLAGS_checkpoint);
  std::filesystem::path scratch;
  if (dir.empty()) {
    scratch = std::filesystem::temp_directory_path() /
              ("ditserve-bench-flux-" + std::to_string(::getpid()));
    dir = scratch.string();
    if (absl::Status status = checkpoints::WriteFluxCheckpoint(
            families::kFluxDevDefaults, checkpoints::CheckpointPreset::kSmall,
            /*seed=*/0, dir);
        !status.ok()) {
      return status;
    }
  }
  absl::StatusOr<models::FluxTransformerConfig> config =
      models::ReadFluxTransformerConfig(dir + "/transformer/config.json");
  families::LoadOptions options;
  options.attention = std::make_shared<parallel::LocalAttention>();
  absl::StatusOr<std::unique_ptr<families::FamilyModel>> model =
      families::FluxFamily().Load(dir, options);
  if (!scratch.empty()) std::filesystem::remove_all(scratch);
  if (!config.ok()) return config.status();
  if (!model.ok()) return model.status();

  nlohmann::json report = {
      {"checkpoint", absl::GetFlag(FLAGS_checkpoint).empty()
                         ? "random flux-dev small (seed 0)"
                         : dir},
      {"transformer",
       {{"blocks", config->total_blocks()},
        {"heads", config->num_attention_heads},
        {"inner_dim", config->inner_dim()}}},
      {"text_tokens", kTextTokens},
      {"generation_steps", kGenerationSteps},
      {"openmp", base::OpenMpWaitPolicy()},
      {"results", nlohmann::json::array()},
  };
  const int repeats = absl::GetFlag(FLAGS_repeats);
  for (int64_t size : *sizes) {
    for (int64_t threads : *thread_counts) {
      engine::SetComputeThreads(static_cast<int>(threads));
      const families::GenerationRequest request =
          Request(**model, *config, size);
      absl::StatusOr<at::Tensor> latents =
          engine::InitialLatents(**model, request);
      if (!latents.ok()) return latents.status();
      absl::StatusOr<nlohmann::json> forward = Time(repeats, [&] {
        return TransformerForward(**model, request, *latents);
      });
      if (!forward.ok()) return forward.status();
      absl::StatusOr<nlohmann::json> generation = Time(repeats, [&] {
        return engine::Generate(**model, request, {}).status();
      });
      if (!generation.ok()) return generation.status();
      report["results"].push_back({{"height", size},
                                   {"width", size},
                                   {"threads", threads},
                                   {"image_tokens", latents->size(1)},
                                   {"transformer_forward_ms", *forward},
                                   {"generation_ms", *generation}});
    }
  }
  return report;
}

}  // namespace
}  // namespace ditserve::bench

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "times FLUX transformer forwards and 4-step generations; prints JSON");
  absl::ParseCommandLine(argc, argv);
  // stdout carries only the JSON report; load logs go to stderr.
  spdlog::set_default_logger(spdlog::stderr_color_mt("bench"));
  // Measured as the ranks run.
  spdlog::info("{}", ditserve::base::KeepFreedMemoryForReuse());
  spdlog::info("{}", ditserve::base::OpenMpWaitPolicy());
  absl::StatusOr<nlohmann::json> report = ditserve::bench::Run();
  if (!report.ok()) {
    std::cerr << report.status() << "\n";
    return 1;
  }
  std::cout << report->dump(2) << "\n";
  return 0;
}
