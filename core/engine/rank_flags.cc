#include "core/engine/rank_flags.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

ABSL_FLAG(std::string, model_dir, "",
          "diffusers checkpoint folder; empty = the built-in default (a tiny "
          "FLUX.1-dev checkpoint with random weights, made once in "
          "--model_cache_dir)");
ABSL_FLAG(std::string, model_cache_dir, "",
          "where the built-in default model is kept; empty = "
          "$XDG_CACHE_HOME/ditserve or ~/.cache/ditserve");
ABSL_FLAG(int, threads, 0,
          "intra-op threads of this rank; 0 = cores / ranks on this machine");
ABSL_FLAG(absl::optional<int>, dp_degree, absl::nullopt,
          "data parallel degree; omitted = world size / (cfg × pipefusion × "
          "ring × ulysses)");
ABSL_FLAG(int, cfg_degree, 1,
          "classifier-free-guidance parallel degree (1, 2)");
ABSL_FLAG(int, pipefusion_degree, 1, "PipeFusion stages");
ABSL_FLAG(int, ring_degree, 1, "ring attention degree");
ABSL_FLAG(int, ulysses_degree, 1, "Ulysses attention degree");
ABSL_FLAG(int, num_pipeline_patch, 0,
          "PipeFusion image patches; 0 = --pipefusion_degree");
ABSL_FLAG(int, warmup_steps, 1, "synchronous PipeFusion warm-up steps");
ABSL_FLAG(absl::optional<int>, rank, absl::nullopt, "overrides $RANK");
ABSL_FLAG(absl::optional<int>, world_size, absl::nullopt,
          "overrides $WORLD_SIZE");
ABSL_FLAG(absl::optional<int>, local_rank, absl::nullopt,
          "overrides $LOCAL_RANK");
ABSL_FLAG(absl::optional<std::string>, master_addr, absl::nullopt,
          "overrides $MASTER_ADDR");
ABSL_FLAG(absl::optional<int>, master_port, absl::nullopt,
          "overrides $MASTER_PORT");
ABSL_FLAG(double, connect_timeout_s, 120,
          "longest wait for every rank to join at start-up, seconds");
ABSL_FLAG(double, collective_timeout_s, 60,
          "longest wait of one collective, seconds; a silent or lost rank "
          "fails the request after this long (same on every rank)");
ABSL_FLAG(double, load_timeout_s, 1800,
          "longest wait, once this rank loaded its share of the model, for "
          "every other rank to load theirs, seconds");
ABSL_FLAG(double, hung_rank_timeout_s, 6,
          "a rank whose heartbeat stops this long (stopped, hung or cut off) "
          "fails the request in progress, seconds; at least two heartbeats "
          "(1 s)");
ABSL_FLAG(double, ping_interval_s, 5,
          "host pings idle workers this often, seconds (at most half of "
          "--collective_timeout_s)");
ABSL_FLAG(std::string, log_format, "text", "text or json");
ABSL_FLAG(std::string, device, "cpu",
          "where the ranks compute: cpu, or cuda (the GPU LOCAL_RANK "
          "picks); the same on every rank");
ABSL_FLAG(double, cuda_memory_fraction, 1,
          "with --device cuda, the share (0 to 1] of its GPU's memory that "
          "LibTorch's caching allocator may take for a rank (the CUDA "
          "context and NCCL's buffers come on top), so that other processes "
          "can share the GPU; a request that needs more fails with "
          "RESOURCE_EXHAUSTED");
ABSL_FLAG(int, prompt_cache_mb, 256,
          "MiB of text encoder outputs each rank keeps, on the model's "
          "device, for prompts seen again (0: none)");
ABSL_FLAG(std::string, dtype, "float32",
          "the models' dtype: float32, bfloat16 (slow on a CPU) or float16 "
          "(CUDA only); the same on every rank");

namespace ditserve::engine {
namespace {

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

template <typename T>
std::optional<T> ToStd(const absl::optional<T>& value) {
  return value.has_value() ? std::optional<T>(*value) : std::nullopt;
}

}  // namespace

config::ParallelFlags ParallelFlagsFromFlags() {
  config::ParallelFlags flags;
  flags.dp_degree = ToStd(absl::GetFlag(FLAGS_dp_degree));
  flags.cfg_degree = absl::GetFlag(FLAGS_cfg_degree);
  flags.pipefusion_degree = absl::GetFlag(FLAGS_pipefusion_degree);
  flags.ring_degree = absl::GetFlag(FLAGS_ring_degree);
  flags.ulysses_degree = absl::GetFlag(FLAGS_ulysses_degree);
  flags.num_pipeline_patch = absl::GetFlag(FLAGS_num_pipeline_patch);
  flags.warmup_steps = absl::GetFlag(FLAGS_warmup_steps);
  return flags;
}

dist::RankEnvOverrides RankEnvOverridesFromFlags() {
  dist::RankEnvOverrides overrides;
  overrides.rank = ToStd(absl::GetFlag(FLAGS_rank));
  overrides.world_size = ToStd(absl::GetFlag(FLAGS_world_size));
  overrides.local_rank = ToStd(absl::GetFlag(FLAGS_local_rank));
  overrides.master_addr = ToStd(absl::GetFlag(FLAGS_master_addr));
  overrides.master_port = ToStd(absl::GetFlag(FLAGS_master_port));
  return overrides;
}

absl::StatusOr<dist::RendezvousOptions> RendezvousOptionsFromFlags() {
  for (const auto& [flag, seconds] :
       {std::pair{"--connect_timeout_s",
                  absl::GetFlag(FLAGS_connect_timeout_s)},
        std::pair{"--load_timeout_s", absl::GetFlag(FLAGS_load_timeout_s)},
        std::pair{"--collective_timeout_s",
                  absl::GetFlag(FLAGS_collective_timeout_s)},
        std::pair{"--hung_rank_timeout_s",
                  absl::GetFlag(FLAGS_hung_rank_timeout_s)}}) {
    // Each becomes milliseconds in an int64_t (infinity would not), and
    // twice a timeout is a deadline; no wait of a million seconds is meant.
    if (!(seconds > 0 && seconds <= 1e6)) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, " must be above 0 and at most 1000000, got ", seconds));
    }
  }
  // An idle worker waits for the host's next message (a ping at the
  // latest) for at most a collective timeout, then takes the group as
  // broken: a longer ping interval breaks an idle group again and again.
  // Half leaves a ping that comes late room to arrive.
  const double collective_seconds = absl::GetFlag(FLAGS_collective_timeout_s);
  const double ping_seconds = absl::GetFlag(FLAGS_ping_interval_s);
  if (!(ping_seconds > 0 && ping_seconds <= collective_seconds / 2)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--ping_interval_s must be above 0 and at most half of "
        "--collective_timeout_s (",
        collective_seconds,
        "): an idle worker that hears nothing from the host for that long "
        "takes the group as broken; got ",
        ping_seconds));
  }
  dist::RendezvousOptions options;
  options.connect_timeout = Millis(absl::GetFlag(FLAGS_connect_timeout_s));
  options.load_timeout = Millis(absl::GetFlag(FLAGS_load_timeout_s));
  options.collective_timeout =
      Millis(absl::GetFlag(FLAGS_collective_timeout_s));
  options.watchdog.hung_after =
      Millis(absl::GetFlag(FLAGS_hung_rank_timeout_s));
  // Fewer than two heartbeats apart, a busy but live rank would look hung.
  const auto shortest = 2 * options.watchdog.interval;
  if (options.watchdog.hung_after < shortest) {
    return absl::InvalidArgumentError(
        absl::StrCat("--hung_rank_timeout_s must be at least ",
                     std::chrono::duration<double>(shortest).count(),
                     " (two heartbeat intervals), got ",
                     absl::GetFlag(FLAGS_hung_rank_timeout_s)));
  }
  return options;
}

absl::StatusOr<ComputeTarget> ComputeTargetFromFlags(const dist::RankEnv& env) {
  return ParseComputeTarget(absl::GetFlag(FLAGS_device),
                            absl::GetFlag(FLAGS_dtype), env.local_rank);
}

absl::Status LimitDeviceMemoryFromFlags(const ComputeTarget& target) {
  return LimitDeviceMemory(target, absl::GetFlag(FLAGS_cuda_memory_fraction));
}

absl::StatusOr<int64_t> PromptCacheBytesFromFlags() {
  const int megabytes = absl::GetFlag(FLAGS_prompt_cache_mb);
  if (megabytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--prompt_cache_mb must be 0 (no cache) or more, got ", megabytes));
  }
  return int64_t{megabytes} << 20;
}

int IntraOpThreads(const dist::RankEnv& env) {
  if (absl::GetFlag(FLAGS_threads) > 0) return absl::GetFlag(FLAGS_threads);
  int local_ranks = env.world_size;
  if (const char* local = std::getenv("LOCAL_WORLD_SIZE")) {
    int parsed = 0;
    if (absl::SimpleAtoi(local, &parsed) && parsed > 0) local_ranks = parsed;
  }
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cores / std::max(1, local_ranks));
}

}  // namespace ditserve::engine
