#ifndef DITSERVE_TESTS_SUPPORT_FROZEN_TEST_CONFIG_H_
#define DITSERVE_TESTS_SUPPORT_FROZEN_TEST_CONFIG_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "core/config/freeze.h"
#include "core/config/model_spec.h"
#include "core/config/parallel_config.h"
#include "core/config/server_options.h"
#include "core/families/flux/flux_defaults.h"
#include "ditserve/v1/generation.pb.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::testing {

// A small FLUX.1-dev-shaped model (the dimensions of the tiny golden
// checkpoints), so configs freeze through the real defaults table.
inline config::ModelSpec TinyFluxSpec() {
  return {.defaults = families::kFluxDevDefaults,
          .num_attention_heads = 4,
          .num_layers = 2,
          .patch_size = 2,
          .latent_channels = 16,
          .vae_scale_factor = 8};
}

// What varies between the configs of the distributed tests.
struct TestConfigRequest {
  std::string request_id = "req-1";
  uint64_t sequence_number = 1;
  int prompts = 1;
  int max_sequence_length = 256;
  int side_pixels = 128;
  int steps = 2;
  uint64_t seed = 42;
  int partial_images = 0;
};

// The real Freeze() of a flux-dev request for `parallel`.
inline absl::StatusOr<v1::InputConfig> FreezeTestConfig(
    const TestConfigRequest& request, const v1::ParallelConfig& parallel) {
  v1::GenerateRequest generate;
  generate.set_model(std::string(families::kFluxDevDefaults.name));
  for (int i = 0; i < request.prompts; ++i) {
    generate.add_prompt("a lighthouse at dusk, number " + std::to_string(i));
  }
  generate.set_height(request.side_pixels);
  generate.set_width(request.side_pixels);
  generate.set_num_inference_steps(request.steps);
  generate.set_partial_images(request.partial_images);
  generate.set_seed(request.seed);
  generate.set_max_sequence_length(request.max_sequence_length);
  generate.set_request_id(request.request_id);
  config::FreezeContext context;
  context.sequence_number = request.sequence_number;
  return config::Freeze(generate, TinyFluxSpec(), config::ServerOptions{},
                        parallel, context);
}

// The parallel config of the distributed tests: dp 2 × ulysses 2 for four
// ranks, ulysses over all ranks otherwise.
inline absl::StatusOr<v1::ParallelConfig> TestParallelConfig(int world_size) {
  config::ParallelFlags flags;
  if (world_size == 4) {
    flags.dp_degree = 2;
    flags.ulysses_degree = 2;
  } else {
    flags.ulysses_degree = world_size;
  }
  return config::MakeParallelConfig(flags, world_size);
}

}  // namespace ditserve::testing

#endif  // DITSERVE_TESTS_SUPPORT_FROZEN_TEST_CONFIG_H_
