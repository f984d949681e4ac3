// Freeze on arbitrary GenerateRequest bytes, as the host gets them from a
// client: every request that parses must freeze or fail with the codes
// freeze.h promises, and freezing must be a pure function.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/config/config_digest.h"
#include "core/config/freeze.h"
#include "core/config/message_decoding.h"
#include "core/config/model_spec.h"
#include "core/config/parallel_config.h"
#include "core/config/server_options.h"
#include "core/families/cogvideox/cogvideox_defaults.h"
#include "core/families/flux/flux_defaults.h"
#include "core/families/pixart/pixart_defaults.h"
#include "core/families/sd3/sd3_defaults.h"
#include "ditserve/v1/generation.pb.h"
#include "google/protobuf/stubs/logging.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/support/frozen_test_config.h"
#include "tests/support/reference_specs.h"

namespace ditserve {
namespace {

struct Setup {
  // One served model of every family, at the sizes of its release, and the
  // tiny FLUX of the distributed tests.
  std::vector<config::ModelSpec> specs;
  // One rank, and the parallel configs of the distributed tests.
  std::vector<v1::ParallelConfig> parallels;
};

const Setup& GetSetup() {
  static const Setup* setup = [] {
    auto* result = new Setup;
    result->specs = {testing::TinyFluxSpec(),
                     testing::FullSizeSpec(families::kFluxSchnellDefaults),
                     testing::FullSizeSpec(families::kSD3MediumDefaults),
                     testing::FullSizeSpec(families::kPixArtSigmaDefaults),
                     testing::FullSizeSpec(families::kCogVideoX15Defaults)};
    for (int world_size : {1, 2, 4}) {
      absl::StatusOr<v1::ParallelConfig> parallel =
          testing::TestParallelConfig(world_size);
      FUZZ_CHECK(parallel.ok(), "%s", parallel.status().ToString().c_str());
      result->parallels.push_back(*parallel);
    }
    return result;
  }();
  return *setup;
}

void FuzzOne(const uint8_t* data, size_t size) {
  const Setup& setup = GetSetup();
  v1::GenerateRequest request;
  // The host's own parsing: bytes it refuses are refused as bad input.
  const absl::Status parsed = config::ParseRequest(
      absl::string_view(reinterpret_cast<const char*>(data), size), request);
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.code() == absl::StatusCode::kInvalidArgument, "%s",
               parsed.ToString().c_str());
    return;
  }
  config::FreezeContext context{.sequence_number = 7,
                                .generated_request_id = "generated",
                                .drawn_seed = 1234,
                                .deadline_unix_micros = 0};
  for (const config::ModelSpec& spec : setup.specs) {
    for (const v1::ParallelConfig& parallel : setup.parallels) {
      absl::StatusOr<v1::InputConfig> frozen = config::Freeze(
          request, spec, config::ServerOptions{}, parallel, context);
      if (!frozen.ok()) {
        const absl::StatusCode code = frozen.status().code();
        FUZZ_CHECK(code == absl::StatusCode::kInvalidArgument ||
                       code == absl::StatusCode::kNotFound,
                   "%s", frozen.status().ToString().c_str());
        FUZZ_CHECK(!frozen.status().message().empty(), "empty message");
        continue;
      }
      absl::StatusOr<v1::InputConfig> again = config::Freeze(
          request, spec, config::ServerOptions{}, parallel, context);
      FUZZ_CHECK(again.ok() && config::MessageDigest(*again) ==
                                   config::MessageDigest(*frozen),
                 "Freeze of one request gave two configs");
    }
  }
}

}  // namespace
}  // namespace ditserve

// protobuf logs each string field with invalid UTF-8 that it refuses; at
// fuzzing rates that would be most of the output and of the time.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ditserve::FuzzOne(data, size);
  return 0;
}
