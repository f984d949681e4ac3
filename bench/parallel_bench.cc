// ditserve-bench-parallel: end-to-end latency of one Generate call on a real
// serving group (ditserve-host + ditserve-worker processes on loopback) for
// each parallel configuration, with the speedup against world 1 measured in
// the same run. Prints one JSON document.
//
//   ditserve-bench-parallel [--family flux-dev] [--preset small]
//       [--height 256 --width 256] [--frames N] [--steps 4] [--prompts 2]
//       [--repeats 3]
//       [--configs world1_threads1,world1_threads2,dp2,ulysses2,ring2,...]
//       [--checkpoint DIR]
//
// A configuration the server refuses (not implemented for the family, or not
// valid for the model) is reported with the server's reason, not skipped
// silently.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tools/local_cluster/serving_cluster.h"

ABSL_FLAG(std::string, family, "flux-dev",
          "model family of the random checkpoint (ditserve-make-checkpoint "
          "--family)");
ABSL_FLAG(std::string, preset, "small", "checkpoint size preset");
ABSL_FLAG(std::string, checkpoint, "",
          "checkpoint folder; empty = a random one of --family/--preset "
          "written to a temporary folder");
ABSL_FLAG(int, height, 256, "image height in pixels");
ABSL_FLAG(int, width, 256, "image width in pixels");
ABSL_FLAG(int, frames, 0,
          "frames per video (video models); 0 = the model's default for an "
          "image model, 1");
ABSL_FLAG(int, steps, 4, "denoising steps per request");
ABSL_FLAG(int, prompts, 2,
          "prompts per request (data parallel needs at least dp of them)");
ABSL_FLAG(int, repeats, 3,
          "timed requests per configuration (after one "
          "warm-up request)");
ABSL_FLAG(std::vector<std::string>, configs,
          (std::vector<std::string>{"world1_threads1", "world1_threads2", "dp2",
                                    "cfg2", "ulysses2", "ring2",
                                    "pipefusion2"}),
          "configurations to run, comma separated; the first is the "
          "baseline of every speedup");

namespace ditserve::bench {
namespace {

// One way to run the group: world size, intra-op threads per rank and the
// parallel flags every rank gets.
struct BenchConfig {
  int world_size = 1;
  int threads = 1;
  std::vector<std::string> flags;
};

const std::map<std::string, BenchConfig>& KnownConfigs() {
  static const auto* const configs = new std::map<std::string, BenchConfig>{
      {"world1_threads1", {1, 1, {}}},
      {"world1_threads2", {1, 2, {}}},
      {"dp2", {2, 1, {"--dp_degree=2"}}},
      {"cfg2", {2, 1, {"--cfg_degree=2"}}},
      {"ulysses2", {2, 1, {"--ulysses_degree=2"}}},
      {"ring2", {2, 1, {"--ring_degree=2"}}},
      {"pipefusion2", {2, 1, {"--pipefusion_degree=2"}}},
      // Four ranks: for machines with four cores or accelerators or more.
      {"ulysses2_ring2", {4, 1, {"--ulysses_degree=2", "--ring_degree=2"}}},
      {"cfg2_ulysses2", {4, 1, {"--cfg_degree=2", "--ulysses_degree=2"}}},
      {"pipefusion2_ulysses2",
       {4, 1, {"--pipefusion_degree=2", "--ulysses_degree=2"}}},
      {"pipefusion2_ring2",
       {4, 1, {"--pipefusion_degree=2", "--ring_degree=2"}}},
  };
  return *configs;
}

v1::GenerateRequest BenchRequest() {
  v1::GenerateRequest request;
  for (int i = 0; i < absl::GetFlag(FLAGS_prompts); ++i) {
    request.add_prompt(
        absl::StrCat("a lighthouse on a cliff at dusk, view ", i + 1));
  }
  request.set_height(absl::GetFlag(FLAGS_height));
  request.set_width(absl::GetFlag(FLAGS_width));
  request.set_num_inference_steps(absl::GetFlag(FLAGS_steps));
  if (absl::GetFlag(FLAGS_frames) > 0) {
    request.set_num_frames(absl::GetFlag(FLAGS_frames));
  }
  request.set_seed(1);
  request.set_output_format(v1::OUTPUT_FORMAT_LATENT_F32);
  return request;
}

// The last lines of a failure that carries rank logs: where the reason is.
std::string Tail(const std::string& text) {
  constexpr size_t kKeep = 600;
  return text.size() <= kKeep ? text : text.substr(text.size() - kKeep);
}

nlohmann::json Measure(const std::string& name, const BenchConfig& config,
                       const std::string& checkpoint) {
  nlohmann::json result = {{"config", name},
                           {"world_size", config.world_size},
                           {"threads_per_rank", config.threads},
                           {"flags", config.flags}};
  local_cluster::ClusterOptions options;
  options.world_size = config.world_size;
  options.rank_flags = config.flags;
  options.rank_flags.push_back(absl::StrCat("--model_dir=", checkpoint));
  options.rank_flags.push_back(absl::StrCat("--threads=", config.threads));
  absl::StatusOr<std::unique_ptr<local_cluster::ServingCluster>> cluster =
      local_cluster::ServingCluster::Start(options);
  if (!cluster.ok()) {
    result["error"] = Tail(std::string(cluster.status().message()));
    return result;
  }
  const v1::GenerateRequest request = BenchRequest();
  std::vector<double> milliseconds;
  // Rank 0's denoise stage per step: the transformer forwards and the
  // collectives, without text encoding and decoding.
  std::vector<double> step_milliseconds;
  // Under PipeFusion, per rank: the fraction of its denoise stage it waited
  // for another stage (its share of the pipeline bubble), per request.
  std::map<int, std::vector<double>> wait_fractions;
  for (int i = 0; i <= absl::GetFlag(FLAGS_repeats); ++i) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<v1::GenerateResponse> response =
        (*cluster)->Generate(request, /*seconds=*/3600);
    if (!response.ok()) {
      result["error"] = response.status().ToString();
      return result;
    }
    // Request 0 is the warm-up (first-touch of weights, allocator).
    if (i == 0) continue;
    milliseconds.push_back(std::chrono::duration<double, std::milli>(
                               std::chrono::steady_clock::now() - start)
                               .count());
    std::map<int, double> denoise_seconds;
    std::map<int, double> wait_seconds;
    for (const v1::StageTiming& timing : response->timings()) {
      if (timing.stage() == "denoise") {
        denoise_seconds[timing.rank()] += timing.seconds();
      } else if (timing.stage() == "pipeline_wait") {
        wait_seconds[timing.rank()] += timing.seconds();
      }
    }
    step_milliseconds.push_back(1000 * denoise_seconds[0] /
                                request.num_inference_steps());
    for (const auto& [rank, seconds] : wait_seconds) {
      wait_fractions[rank].push_back(seconds / denoise_seconds[rank]);
    }
  }
  (*cluster)->Terminate();
  (*cluster)->ranks().WaitAll(std::chrono::seconds(60));
  const auto summary = [](std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return nlohmann::json{{"median", values[values.size() / 2]},
                          {"min", values.front()},
                          {"max", values.back()},
                          {"runs", values.size()}};
  };
  result["request_ms"] = summary(milliseconds);
  result["denoise_step_ms"] = summary(step_milliseconds);
  for (const auto& [rank, fractions] : wait_fractions) {
    nlohmann::json wait = summary(fractions);
    wait["rank"] = rank;
    result["pipeline_wait_fraction"].push_back(wait);
  }
  // One output (image or video) per prompt.
  result["per_output_ms"] =
      result["request_ms"]["median"].get<double>() / request.prompt_size();
  return result;
}

absl::StatusOr<std::string> WriteCheckpoint(const std::filesystem::path& dir) {
  const std::string command = absl::StrCat(
      DITSERVE_BIN_DIR,
      "/ditserve-make-checkpoint --family=", absl::GetFlag(FLAGS_family),
      " --preset=", absl::GetFlag(FLAGS_preset),
      " --seed=0 --out=", dir.string(), " >&2");
  if (std::system(command.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("failed: ", command));
  }
  return dir.string();
}

absl::StatusOr<nlohmann::json> Run() {
  if (absl::GetFlag(FLAGS_repeats) < 1 || absl::GetFlag(FLAGS_prompts) < 1) {
    return absl::InvalidArgumentError("--repeats and --prompts must be ≥ 1");
  }
  const std::vector<std::string> names = absl::GetFlag(FLAGS_configs);
  for (const std::string& name : names) {
    if (KnownConfigs().count(name) == 0) {
      std::string known;
      for (const auto& [key, unused] : KnownConfigs()) {
        absl::StrAppend(&known, known.empty() ? "" : ", ", key);
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "--configs: unknown configuration \"", name, "\"; known: ", known));
    }
  }
  std::string checkpoint = absl::GetFlag(FLAGS_checkpoint);
  std::filesystem::path scratch;
  if (checkpoint.empty()) {
    scratch = std::filesystem::temp_directory_path() /
              absl::StrCat("ditserve-bench-parallel-", ::getpid());
    absl::StatusOr<std::string> written = WriteCheckpoint(scratch);
    if (!written.ok()) return written.status();
    checkpoint = *written;
  }

  nlohmann::json report = {
      {"checkpoint",
       absl::GetFlag(FLAGS_checkpoint).empty()
           ? absl::StrCat("random ", absl::GetFlag(FLAGS_family), " ",
                          absl::GetFlag(FLAGS_preset), " (seed 0)")
           : checkpoint},
      {"height", absl::GetFlag(FLAGS_height)},
      {"width", absl::GetFlag(FLAGS_width)},
      {"frames", absl::GetFlag(FLAGS_frames)},
      {"steps", absl::GetFlag(FLAGS_steps)},
      {"prompts", absl::GetFlag(FLAGS_prompts)},
      {"cores", std::thread::hardware_concurrency()},
      {"results", nlohmann::json::array()},
  };
  std::optional<double> baseline;
  for (const std::string& name : names) {
    std::cerr << "bench: " << name << "\n";
    nlohmann::json result = Measure(name, KnownConfigs().at(name), checkpoint);
    if (result.contains("request_ms")) {
      const double median = result["request_ms"]["median"].get<double>();
      if (!baseline.has_value()) baseline = median;
      result["speedup_vs_baseline"] = *baseline / median;
    }
    report["results"].push_back(std::move(result));
  }
  report["baseline"] = names.front();
  if (!scratch.empty()) std::filesystem::remove_all(scratch);
  return report;
}

}  // namespace
}  // namespace ditserve::bench

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "times one Generate per parallel configuration on a real serving "
      "group; prints JSON");
  absl::ParseCommandLine(argc, argv);
  absl::StatusOr<nlohmann::json> report = ditserve::bench::Run();
  if (!report.ok()) {
    std::cerr << report.status() << "\n";
    return 1;
  }
  std::cout << report->dump(2) << "\n";
  return 0;
}
