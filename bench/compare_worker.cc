// ditserve-bench-compare-worker: ditserve's side of bench/compare_diffusers.
// Loads one checkpoint folder (any registered family, without its prompt
// encoders) and answers one JSON request per stdin line with one JSON line on
// stdout, so that the Python driver can interleave ditserve and diffusers
// runs on the same warm models and inputs.
//
//   ditserve-bench-compare-worker --checkpoint DIR [--device cuda]
//                                 [--dtype bfloat16]
//
//   {"op": "forward" | "decode" | "generate", "inputs": "in.safetensors",
//    "threads": 1, "height": 512, "width": 512, "frames": 1, "steps": 4,
//    "guidance": 3.5, "output": "out.safetensors",
//    "trace": "op.trace.json"}  ->  {"ms": 12.3}
//
// Inputs (float32): "latents" (forward: the transformer's packed layout;
// decode: unpacked [B, C, h, w], a video's [B, F, C, h, w]), "timestep"
// (0-dim, the scheduler's value), "states", "pooled", "mask" (those the
// family uses) and, for a guided generation, "negative_states" and
// "negative_pooled"; they go to the model's device, the floating ones in its
// dtype, as a pipeline in that dtype passes them. "ms" times the op alone, to
// the end of its device work: reading inputs and writing "output" (optional;
// the transformer output in float32 or the uint8 "rgb" image, a video's
// [B, F, H, W, 3]) are outside it. "trace" (optional) writes what the op ran
// as a Chrome trace (bench/kineto_trace.h); its "ms" then includes the
// profiler's overhead.
#include <torch/cuda.h>
#include <torch/torch.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "bench/kineto_trace.h"
#include "core/base/allocator_tuning.h"
#include "core/base/openmp_wait_policy.h"
#include "core/base/status_macros.h"
#include "core/engine/compute_target.h"
#include "core/engine/compute_threads.h"
#include "core/engine/denoise_loop.h"
#include "core/engine/family_registry.h"
#include "core/io/safetensors.h"
#include "core/parallel/local_attention.h"
#include "nlohmann/json.hpp"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, checkpoint, "", "diffusers checkpoint folder");
ABSL_FLAG(std::string, device, "cpu", "cpu or cuda (the first GPU)");
ABSL_FLAG(std::string, dtype, "float32", "float32, bfloat16 or float16");

namespace ditserve::bench {
namespace {

at::Tensor Optional(const io::TensorMap& inputs, const std::string& name) {
  auto it = inputs.find(name);
  return it == inputs.end() ? at::Tensor() : it->second;
}

families::GenerationRequest RequestOf(const nlohmann::json& command,
                                      const io::TensorMap& inputs) {
  families::GenerationRequest request;
  request.prompt.states = Optional(inputs, "states");
  request.prompt.pooled = Optional(inputs, "pooled");
  request.prompt.mask = Optional(inputs, "mask");
  request.negative_prompt.states = Optional(inputs, "negative_states");
  request.negative_prompt.pooled = Optional(inputs, "negative_pooled");
  request.height = command.at("height").get<int64_t>();
  request.width = command.at("width").get<int64_t>();
  request.frames = command.value("frames", int64_t{1});
  request.num_inference_steps = command.value("steps", 1);
  request.guidance_scale = command.value("guidance", 0.0F);
  request.seeds = {0};
  return request;
}

io::TensorMap Placed(io::TensorMap tensors,
                     const models::Placement& placement) {
  for (auto& [name, tensor] : tensors) {
    tensor = tensor.is_floating_point()
                 ? tensor.to(placement.device, placement.dtype)
                 : tensor.to(placement.device);
  }
  return tensors;
}

// Runs one command; `output` receives what the command writes back.
absl::StatusOr<double> Run(families::FamilyModel& model,
                           const models::Placement& placement,
                           const nlohmann::json& command,
                           io::TensorMap& output) {
  ASSIGN_OR_RETURN(io::TensorMap read,
                   io::ReadAllTensors(command.at("inputs").get<std::string>()));
  const io::TensorMap inputs = Placed(std::move(read), placement);
  engine::SetComputeThreads(command.at("threads").get<int>());
  const families::GenerationRequest request = RequestOf(command, inputs);
  const std::string op = command.at("op").get<std::string>();
  torch::NoGradGuard no_grad;
  const auto start = std::chrono::steady_clock::now();
  if (op == "forward") {
    ASSIGN_OR_RETURN(std::unique_ptr<families::BoundForward> forward,
                     model.BindForward(request, inputs.at("latents"),
                                       inputs.at("timestep"), request.prompt));
    ASSIGN_OR_RETURN(output["output"], forward->Whole());
  } else if (op == "decode") {
    ASSIGN_OR_RETURN(
        families::DecodeOutput decoded,
        model.Decode(inputs.at("latents"), {.height = request.height,
                                            .width = request.width,
                                            .frames = request.frames}));
    output["rgb"] = decoded.images.rgb;
  } else if (op == "generate") {
    ASSIGN_OR_RETURN(families::DecodeOutput decoded,
                     engine::Generate(model, request, {}));
    output["rgb"] = decoded.images.rgb;
  } else {
    return absl::InvalidArgumentError("unknown op \"" + op + "\"");
  }
  // CUDA kernels run asynchronously: the op ends when the device is done.
  if (placement.device.is_cuda()) torch::cuda::synchronize();
  const double milliseconds = std::chrono::duration<double, std::milli>(
                                  std::chrono::steady_clock::now() - start)
                                  .count();
  for (auto& [name, tensor] : output) {
    if (tensor.is_floating_point()) tensor = tensor.to(at::kCPU, at::kFloat);
  }
  return milliseconds;
}

absl::StatusOr<std::unique_ptr<families::FamilyModel>> Load(
    const std::string& dir, const models::Placement& placement) {
  ASSIGN_OR_RETURN(config::ModelSpec spec, engine::ReadModelSpec(dir));
  ASSIGN_OR_RETURN(const families::Family* family,
                   engine::FamilyFor(spec.defaults.name));
  families::LoadOptions options;
  options.attention = std::make_shared<parallel::LocalAttention>();
  options.prompt_encoders = false;
  options.placement = placement;
  return family->Load(dir, options);
}

int Serve() {
  absl::StatusOr<engine::ComputeTarget> target = engine::ParseComputeTarget(
      absl::GetFlag(FLAGS_device), absl::GetFlag(FLAGS_dtype),
      /*local_rank=*/0);
  if (!target.ok()) {
    std::cerr << target.status() << "\n";
    return 2;
  }
  absl::StatusOr<std::unique_ptr<families::FamilyModel>> model =
      Load(absl::GetFlag(FLAGS_checkpoint), target->placement);
  if (!model.ok()) {
    std::cerr << model.status() << "\n";
    return 1;
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    nlohmann::json reply;
    try {
      const nlohmann::json command = nlohmann::json::parse(line);
      io::TensorMap output;
      const auto run = [&] {
        return Run(**model, target->placement, command, output);
      };
      absl::StatusOr<double> ms =
          command.contains("trace")
              ? Traced(command["trace"].get<std::string>(),
                       target->placement.device.is_cuda(), run)
              : run();
      if (ms.ok() && command.contains("output")) {
        absl::Status written =
            io::WriteSafetensors(command["output"].get<std::string>(), output);
        if (!written.ok()) ms = written;
      }
      reply = ms.ok() ? nlohmann::json{{"ms", *ms}}
                      : nlohmann::json{{"error", ms.status().ToString()}};
    } catch (const std::exception& e) {
      reply = {{"error", e.what()}};
    }
    std::cout << reply.dump() << std::endl;
  }
  return 0;
}

}  // namespace
}  // namespace ditserve::bench

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "answers bench/compare_diffusers' timing requests on stdin; see "
      "bench/compare_worker.cc");
  absl::ParseCommandLine(argc, argv);
  // stdout carries only the replies; load logs go to stderr.
  spdlog::set_default_logger(spdlog::stderr_color_mt("bench"));
  // Measured as the ranks run.
  spdlog::info("{}", ditserve::base::KeepFreedMemoryForReuse());
  spdlog::info("{}", ditserve::base::OpenMpWaitPolicy());
  return ditserve::bench::Serve();
}
