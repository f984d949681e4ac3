// The HTTP API's request bodies as clients send them: ParseImagesRequest
// refuses what it does not take as bad input, what it takes freezes or is
// refused as freeze.h promises, and every refusal becomes an error body that
// is JSON naming what was wrong, whatever bytes the client sent.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "core/config/freeze.h"
#include "core/config/server_options.h"
#include "ditserve/v1/generation.pb.h"
#include "nlohmann/json.hpp"
#include "server/openai_images.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/support/frozen_test_config.h"

namespace ditserve {
namespace {

// The HTTP API's default --max_batch.
constexpr int kMaxBatch = 4;

void CheckErrorBody(const absl::Status& status) {
  const std::string body = server::ErrorBody(status);
  FUZZ_CHECK(nlohmann::json::accept(body), "error body is not JSON: %s",
             body.c_str());
  const nlohmann::json error = nlohmann::json::parse(body).at("error");
  FUZZ_CHECK(error.at("message").is_string() &&
                 !error.at("message").get<std::string>().empty(),
             "error body without a message: %s", body.c_str());
}

void FuzzOne(const uint8_t* data, size_t size) {
  static const v1::ParallelConfig* const kOneRank = [] {
    absl::StatusOr<v1::ParallelConfig> parallel =
        testing::TestParallelConfig(1);
    FUZZ_CHECK(parallel.ok(), "%s", parallel.status().ToString().c_str());
    return new v1::ParallelConfig(*parallel);
  }();
  const absl::string_view body(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<server::ImagesRequest> parsed =
      server::ParseImagesRequest(body, kMaxBatch);
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument,
               "%s", parsed.status().ToString().c_str());
    CheckErrorBody(parsed.status());
    return;
  }
  const config::FreezeContext context{.sequence_number = 7,
                                      .generated_request_id = "generated",
                                      .drawn_seed = 1234,
                                      .deadline_unix_micros = 0};
  absl::StatusOr<v1::InputConfig> frozen =
      config::Freeze(parsed->request, testing::TinyFluxSpec(),
                     config::ServerOptions{}, *kOneRank, context);
  if (!frozen.ok()) {
    const absl::StatusCode code = frozen.status().code();
    FUZZ_CHECK(code == absl::StatusCode::kInvalidArgument ||
                   code == absl::StatusCode::kNotFound,
               "%s", frozen.status().ToString().c_str());
    CheckErrorBody(frozen.status());
  }
}

}  // namespace
}  // namespace ditserve

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ditserve::FuzzOne(data, size);
  return 0;
}
