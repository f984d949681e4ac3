// ditserve-host and ditserve-worker as a user meets them: real processes on
// loopback, the built-in default model, gRPC calls and /metrics scrapes.

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/config/model_defaults.h"
#include "core/families/flux/flux_defaults.h"
#include "core/io/image.h"
#include "gmock/gmock.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/support/decoded_images.h"
#include "tools/local_cluster/http_get.h"
#include "tools/local_cluster/queue_depth.h"
#include "tools/local_cluster/rank_launcher.h"
#include "tools/local_cluster/running_stream.h"
#include "tools/local_cluster/serving_cluster.h"

namespace ditserve::testing {
namespace {

using ::ditserve::local_cluster::ContextWithDeadline;
using ::ditserve::local_cluster::LongRequest;
using ::ditserve::local_cluster::MetricValue;
using ::ditserve::local_cluster::RankExit;
using ::ditserve::local_cluster::RunningStream;
using ::ditserve::local_cluster::ServingCluster;
using ::ditserve::local_cluster::SmallRequest;
using ::ditserve::local_cluster::StartAndWaitForFirstStep;
using ::ditserve::local_cluster::StartUpFailure;
using ::ditserve::local_cluster::WaitForQueueDepth;

using ::testing::HasSubstr;
using ::testing::Not;
using HealthStatus = grpc::health::v1::HealthCheckResponse;

constexpr double kCallSeconds = 120;
// How long a test waits for the requests it sent to be admitted.
constexpr std::chrono::seconds kQueueWait(30);

grpc::Status Generate(ServingCluster& cluster,
                      const v1::GenerateRequest& request,
                      v1::GenerateResponse* response,
                      double seconds = kCallSeconds) {
  auto context = ContextWithDeadline(seconds);
  return cluster.generation().Generate(context.get(), request, response);
}

// ditserve_requests_total{status="`status`"} summed over clients.
double RequestsCounted(const std::string& metrics, absl::string_view status) {
  return MetricValue(metrics, "ditserve_requests_total",
                     {absl::StrCat("status=\"", status, "\"")});
}

void ExpectPngOfSize(const v1::Image& image, int width, int height) {
  EXPECT_EQ(image.mime_type(), "image/png");
  EXPECT_EQ(image.width(), width);
  EXPECT_EQ(image.height(), height);
  absl::StatusOr<at::Tensor> pixels = io::DecodePng(image.data());
  ASSERT_TRUE(pixels.ok()) << pixels.status();
  EXPECT_EQ(pixels->size(0), height);
  EXPECT_EQ(pixels->size(1), width);
  EXPECT_EQ(pixels->size(2), 3);
}

class ServingWorldTest : public ::testing::TestWithParam<int> {};

// No degree flags: data parallelism over the whole world is inferred, as
// launchers that only set WORLD_SIZE (torchrun, LeaderWorkerSet) expect.
TEST_P(ServingWorldTest, GenerateReturnsPngsOfTheRequestedSize) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = GetParam()});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::ServerInfo info;
  auto info_context = ContextWithDeadline(kCallSeconds);
  const grpc::Status info_status = (*cluster)->generation().GetServerInfo(
      info_context.get(), v1::GetServerInfoRequest(), &info);
  ASSERT_TRUE(info_status.ok()) << info_status.error_message();
  EXPECT_EQ(info.parallel().world_size(), GetParam());
  EXPECT_EQ(info.parallel().dp_degree(), GetParam());
  EXPECT_EQ(info.prompt_cache_bytes(), int64_t{256} << 20)
      << "--prompt_cache_mb's default";
  v1::GenerateRequest request = SmallRequest("a lighthouse at dusk");
  request.add_prompt("a fox in the snow");
  v1::GenerateResponse response;
  const grpc::Status status = Generate(**cluster, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.images_size(), 2);
  for (const v1::Image& image : response.images()) {
    ExpectPngOfSize(image, 48, 64);
  }
  EXPECT_NE(response.images(0).data(), response.images(1).data());
  EXPECT_EQ(response.config().parallel().world_size(), GetParam());
  EXPECT_EQ(response.config().parallel().dp_degree(), GetParam());
  bool has_total = false;
  for (const v1::StageTiming& timing : response.timings()) {
    has_total = has_total || (timing.stage() == "total" && timing.rank() == 0);
  }
  EXPECT_TRUE(has_total);
}

TEST_P(ServingWorldTest, ValidateOnlyFreezesTableDefaultsAndRunsNothing) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = GetParam(),
           .rank_flags = {absl::StrCat("--dp_degree=", GetParam())}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::GenerateRequest request;
  request.add_prompt("defaults please");
  request.set_validate_only(true);
  v1::GenerateResponse response;
  const grpc::Status status = Generate(**cluster, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const config::ModelDefaults& defaults = families::kFluxDevDefaults;
  EXPECT_EQ(response.images_size(), 0);
  EXPECT_EQ(response.config().model(), defaults.name);
  EXPECT_EQ(response.config().height(), defaults.height);
  EXPECT_EQ(response.config().num_inference_steps(),
            defaults.num_inference_steps);
  EXPECT_FLOAT_EQ(response.config().guidance_scale(), defaults.guidance_scale);
  EXPECT_EQ(response.config().max_sequence_length(),
            defaults.max_sequence_length);
  EXPECT_EQ(response.config().seeds_size(), 1);
  absl::StatusOr<std::string> metrics = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(MetricValue(*metrics, "ditserve_stage_duration_seconds_count",
                        {"stage=\"denoise\""}),
            0);
}

INSTANTIATE_TEST_SUITE_P(WorldSizes, ServingWorldTest, ::testing::Values(1, 2));

// One group for the tests that only need a healthy server.
class ServingTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<ServingCluster>> started =
        ServingCluster::Start({.world_size = 2,
                               .rank_flags = {"--dp_degree=2"},
                               .host_flags = {"--max_queue=1"}});
    ASSERT_TRUE(started.ok()) << started.status();
    cluster_ = started->release();
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  void SetUp() override {
    // A group that did not start is a failure of every test that needs it,
    // never a skip.
    ASSERT_NE(cluster_, nullptr) << "the group did not start (see above)";
  }

  static ServingCluster* cluster_;
};
ServingCluster* ServingTest::cluster_ = nullptr;

struct BadRequest {
  std::string name;
  std::function<void(v1::GenerateRequest&)> mutate;
  grpc::StatusCode code;
  std::string field;
};

std::vector<BadRequest> BadRequests() {
  using grpc::StatusCode;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  return {
      {"height_not_multiple", [](auto& r) { r.set_height(70); },
       StatusCode::INVALID_ARGUMENT, "height 70"},
      {"width_not_multiple", [](auto& r) { r.set_width(33); },
       StatusCode::INVALID_ARGUMENT, "width 33"},
      {"height_zero", [](auto& r) { r.set_height(0); },
       StatusCode::INVALID_ARGUMENT, "height 0"},
      {"height_negative", [](auto& r) { r.set_height(-64); },
       StatusCode::INVALID_ARGUMENT, "height -64"},
      {"width_too_large", [](auto& r) { r.set_width(4096); },
       StatusCode::INVALID_ARGUMENT, "width 4096"},
      {"steps_zero", [](auto& r) { r.set_num_inference_steps(0); },
       StatusCode::INVALID_ARGUMENT, "num_inference_steps 0"},
      {"steps_negative", [](auto& r) { r.set_num_inference_steps(-3); },
       StatusCode::INVALID_ARGUMENT, "num_inference_steps -3"},
      {"steps_too_many", [](auto& r) { r.set_num_inference_steps(10000); },
       StatusCode::INVALID_ARGUMENT, "num_inference_steps 10000"},
      {"guidance_nan", [nan](auto& r) { r.set_guidance_scale(nan); },
       StatusCode::INVALID_ARGUMENT, "guidance_scale nan"},
      {"guidance_inf", [inf](auto& r) { r.set_guidance_scale(inf); },
       StatusCode::INVALID_ARGUMENT, "guidance_scale inf"},
      {"guidance_negative_inf", [inf](auto& r) { r.set_guidance_scale(-inf); },
       StatusCode::INVALID_ARGUMENT, "guidance_scale -inf"},
      {"guidance_negative", [](auto& r) { r.set_guidance_scale(-2); },
       StatusCode::INVALID_ARGUMENT, "guidance_scale -2"},
      {"guidance_huge", [](auto& r) { r.set_guidance_scale(1e6F); },
       StatusCode::INVALID_ARGUMENT, "guidance_scale"},
      {"seed_overflows_batch",
       [](auto& r) {
         r.add_prompt("second");
         r.set_seed(std::numeric_limits<uint64_t>::max());
       },
       StatusCode::INVALID_ARGUMENT, "seed 18446744073709551615"},
      {"no_prompt", [](auto& r) { r.clear_prompt(); },
       StatusCode::INVALID_ARGUMENT, "prompt has 0 entries"},
      {"too_many_prompts",
       [](auto& r) {
         for (int i = 0; i < 8; ++i) r.add_prompt("more");
       },
       StatusCode::INVALID_ARGUMENT, "prompt has 9 entries"},
      {"negative_prompt_without_cfg",
       [](auto& r) { r.add_negative_prompt("blurry"); },
       StatusCode::INVALID_ARGUMENT, "negative_prompt"},
      {"prompt_too_long",
       [](auto& r) { r.set_prompt(0, std::string(5000, 'x')); },
       StatusCode::INVALID_ARGUMENT, "prompt[0] has 5000 bytes"},
      {"second_prompt_too_long",
       [](auto& r) { r.add_prompt(std::string(4097, 'y')); },
       StatusCode::INVALID_ARGUMENT, "prompt[1]"},
      {"unknown_model", [](auto& r) { r.set_model("sdxl"); },
       StatusCode::NOT_FOUND, "model \"sdxl\""},
      {"model_name_with_a_newline",
       [](auto& r) { r.set_model("sdxl\nFORGED line"); }, StatusCode::NOT_FOUND,
       "model \"sdxl\nFORGED line\""},
      {"sequence_length_over_limit",
       [](auto& r) { r.set_max_sequence_length(513); },
       StatusCode::INVALID_ARGUMENT, "max_sequence_length 513"},
      {"sequence_length_zero", [](auto& r) { r.set_max_sequence_length(0); },
       StatusCode::INVALID_ARGUMENT, "max_sequence_length 0"},
      {"unknown_output_format",
       [](auto& r) { r.set_output_format(static_cast<v1::OutputFormat>(42)); },
       StatusCode::INVALID_ARGUMENT, "output_format 42"},
      {"quality_of_png", [](auto& r) { r.set_output_quality(90); },
       StatusCode::INVALID_ARGUMENT, "output_quality is for"},
      {"jpeg_quality_zero",
       [](auto& r) {
         r.set_output_format(v1::OUTPUT_FORMAT_JPEG);
         r.set_output_quality(0);
       },
       StatusCode::INVALID_ARGUMENT, "output_quality 0"},
      {"request_id_with_space", [](auto& r) { r.set_request_id("a b"); },
       StatusCode::INVALID_ARGUMENT, "request_id"},
      {"request_id_too_long",
       [](auto& r) { r.set_request_id(std::string(200, 'r')); },
       StatusCode::INVALID_ARGUMENT, "request_id has 200 characters"},
      {"binning_not_available",
       [](auto& r) { r.set_use_resolution_binning(true); },
       StatusCode::INVALID_ARGUMENT, "use_resolution_binning"},
      {"pixels_over_budget",
       [](auto& r) {
         r.set_height(2048);
         r.set_width(2064);
       },
       StatusCode::INVALID_ARGUMENT, "width 2064"},
  };
}

// The fields of the google.rpc.BadRequest details of `status`.
std::vector<std::string> ViolatedFields(const grpc::Status& status) {
  std::vector<std::string> fields;
  google::rpc::Status details;
  if (!details.ParseFromString(status.error_details())) return fields;
  for (const google::protobuf::Any& detail : details.details()) {
    google::rpc::BadRequest bad_request;
    if (!detail.UnpackTo(&bad_request)) continue;
    for (const auto& violation : bad_request.field_violations()) {
      fields.push_back(violation.field());
    }
  }
  return fields;
}

TEST_F(ServingTest, EveryBadRequestIsRefusedNamingTheFieldAndServingGoesOn) {
  const std::vector<BadRequest> cases = BadRequests();
  ASSERT_GE(cases.size(), 25U);
  for (const BadRequest& bad : cases) {
    v1::GenerateRequest request = SmallRequest("bad input");
    bad.mutate(request);
    v1::GenerateResponse response;
    const grpc::Status status = Generate(*cluster_, request, &response);
    EXPECT_EQ(status.error_code(), bad.code)
        << bad.name << ": " << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr(bad.field)) << bad.name;
    const std::vector<std::string> fields = ViolatedFields(status);
    EXPECT_FALSE(fields.empty()) << bad.name << ": no BadRequest detail";
    for (const std::string& field : fields) {
      EXPECT_THAT(status.error_message(), HasSubstr(field)) << bad.name;
    }
  }
  // The host's log says why, for operators who see the refusals counted.
  EXPECT_TRUE(cluster_->ranks().WaitForOutput(
      0,
      absl::StrCat("refused status=invalid_argument before admission: ",
                   "height 70 is not a multiple of 16"),
      std::chrono::seconds(5)));
  // Client text in a refusal stays on its line, escaped.
  EXPECT_TRUE(cluster_->ranks().WaitForOutput(
      0, R"(model \"sdxl\nFORGED line\" is not served here)",
      std::chrono::seconds(5)));
  v1::GenerateResponse response;
  const grpc::Status status =
      Generate(*cluster_, SmallRequest("a good one after"), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.images_size(), 1);
}

TEST_F(ServingTest, XRequestIdMetadataNamesARequestWithoutAnId) {
  auto context = ContextWithDeadline(kCallSeconds);
  context->AddMetadata("x-request-id", "trace-77");
  v1::GenerateRequest request = SmallRequest("traced");
  request.set_validate_only(true);
  v1::GenerateResponse response;
  ASSERT_TRUE(
      cluster_->generation().Generate(context.get(), request, &response).ok());
  EXPECT_EQ(response.config().request_id(), "trace-77");

  auto named_context = ContextWithDeadline(kCallSeconds);
  named_context->AddMetadata("x-request-id", "trace-78");
  request.set_request_id("own-id");
  ASSERT_TRUE(cluster_->generation()
                  .Generate(named_context.get(), request, &response)
                  .ok());
  EXPECT_EQ(response.config().request_id(), "own-id");

  // A proxy's id the server cannot take is refused saying where it came from.
  auto spaced_context = ContextWithDeadline(kCallSeconds);
  spaced_context->AddMetadata("x-request-id", "trace 79");
  request.clear_request_id();
  const grpc::Status spaced =
      cluster_->generation().Generate(spaced_context.get(), request, &response);
  EXPECT_EQ(spaced.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(spaced.error_message(),
              HasSubstr("(taken from the x-request-id header, since "
                        "request_id is empty)"));
}

TEST_F(ServingTest, LatentAndRgbOutputsHaveTheirDocumentedLayouts) {
  v1::GenerateRequest request = SmallRequest("layouts");
  request.set_output_format(v1::OUTPUT_FORMAT_LATENT_F32);
  v1::GenerateResponse latent;
  ASSERT_TRUE(Generate(*cluster_, request, &latent).ok());
  ASSERT_EQ(latent.images_size(), 1);
  const v1::DerivedShapes& shapes = latent.config().shapes();
  EXPECT_EQ(latent.images(0).data().size(),
            sizeof(float) * shapes.latent_channels() * shapes.latent_height() *
                shapes.latent_width());
  request.set_output_format(v1::OUTPUT_FORMAT_RGB8);
  v1::GenerateResponse rgb;
  ASSERT_TRUE(Generate(*cluster_, request, &rgb).ok());
  ASSERT_EQ(rgb.images_size(), 1);
  EXPECT_EQ(rgb.images(0).data().size(), 64U * 48U * 3U);
}

// The served JPEG and WebP decode to the served RGB8 image of the same
// request, and the quality asked for is the one encoded.
TEST_F(ServingTest, JpegAndWebpHoldTheRgbImageAtTheAskedQuality) {
  v1::GenerateRequest request = SmallRequest("formats");
  request.set_seed(77);
  request.set_output_format(v1::OUTPUT_FORMAT_RGB8);
  v1::GenerateResponse rgb;
  ASSERT_TRUE(Generate(*cluster_, request, &rgb).ok());
  ASSERT_EQ(rgb.images_size(), 1);
  const std::string& pixels = rgb.images(0).data();

  struct Served {
    v1::OutputFormat format;
    int quality;
    std::string mime_type;
    std::string bytes;
    std::string decoded;
  };
  std::vector<Served> served = {
      {v1::OUTPUT_FORMAT_JPEG, 95, "image/jpeg"},
      {v1::OUTPUT_FORMAT_JPEG, 10, "image/jpeg"},
      {v1::OUTPUT_FORMAT_WEBP, 95, "image/webp"},
      {v1::OUTPUT_FORMAT_WEBP, 10, "image/webp"},
  };
  for (Served& output : served) {
    request.set_output_format(output.format);
    request.set_output_quality(output.quality);
    v1::GenerateResponse response;
    const grpc::Status status = Generate(*cluster_, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_EQ(response.images_size(), 1);
    EXPECT_EQ(response.config().output_quality(), output.quality);
    const v1::Image& image = response.images(0);
    EXPECT_EQ(image.mime_type(), output.mime_type);
    EXPECT_EQ(image.width(), 48);
    EXPECT_EQ(image.height(), 64);
    output.bytes = image.data();
    if (output.format == v1::OUTPUT_FORMAT_JPEG) {
      absl::StatusOr<DecodedJpeg> decoded = DecodeJpeg(output.bytes);
      ASSERT_TRUE(decoded.ok()) << decoded.status();
      EXPECT_EQ(decoded->width, 48);
      EXPECT_EQ(decoded->height, 64);
      output.decoded = decoded->rgb;
    } else {
      absl::StatusOr<DecodedWebp> decoded = DecodeWebp(output.bytes);
      ASSERT_TRUE(decoded.ok()) << decoded.status();
      EXPECT_FALSE(decoded->animated);
      ASSERT_EQ(decoded->frames.size(), 1U);
      EXPECT_EQ(decoded->width, 48);
      EXPECT_EQ(decoded->height, 64);
      output.decoded = decoded->frames[0];
    }
    RecordProperty(absl::StrCat("luma_psnr_db_", output.mime_type.substr(6),
                                "_q", output.quality),
                   std::to_string(LumaPsnr(pixels, output.decoded)));
  }
  // Each lossy file is of the RGB8 image, not merely of its size: luma PSNR
  // at quality 95 measured 42.1 dB (JPEG) and 45.8 dB (WebP); the image one
  // row off gives 22.6 dB. (Over all of RGB both stay near 21.7 dB: halving
  // the chroma resolution alone costs this noise-like image that much.)
  for (const Served& output : served) {
    if (output.quality == 95) {
      EXPECT_GE(LumaPsnr(pixels, output.decoded), 35) << output.mime_type;
    }
  }
  // And the quality reached the encoder: a lower one gives a smaller file of
  // lower fidelity.
  for (const size_t high : {0, 2}) {
    const Served& better = served[high];
    const Served& worse = served[high + 1];
    EXPECT_LT(worse.bytes.size(), better.bytes.size()) << better.mime_type;
    EXPECT_LT(LumaPsnr(pixels, worse.decoded) + 5,
              LumaPsnr(pixels, better.decoded))
        << better.mime_type;
  }
}

TEST_F(ServingTest, SameSeedGivesTheSameImageWhateverItIsBatchedWith) {
  v1::GenerateRequest alone = SmallRequest("a red barn");
  alone.set_output_format(v1::OUTPUT_FORMAT_LATENT_F32);
  alone.set_seed(1234);
  v1::GenerateRequest batched = alone;
  batched.set_prompt(0, "an unrelated first prompt");
  batched.add_prompt("a red barn");
  batched.set_seed(1233);  // the second image gets seed 1234
  v1::GenerateResponse alone_response, batched_response;
  ASSERT_TRUE(Generate(*cluster_, alone, &alone_response).ok());
  ASSERT_TRUE(Generate(*cluster_, batched, &batched_response).ok());
  ASSERT_EQ(batched_response.images_size(), 2);
  EXPECT_EQ(batched_response.config().seeds(1), 1234U);
  EXPECT_EQ(alone_response.images(0).data(), batched_response.images(1).data());
  // And the decoded pixels: the VAE decodes each image on its own, since CPU
  // kernels may round a value differently with the batch around it.
  // (At 128×128 a batched decode differed from the lone one in 6 of 49 152
  // bytes.)
  for (v1::GenerateRequest* request : {&alone, &batched}) {
    request->set_output_format(v1::OUTPUT_FORMAT_RGB8);
    request->set_height(128);
    request->set_width(128);
  }
  ASSERT_TRUE(Generate(*cluster_, alone, &alone_response).ok());
  ASSERT_TRUE(Generate(*cluster_, batched, &batched_response).ok());
  ASSERT_EQ(batched_response.images_size(), 2);
  const std::string& lone = alone_response.images(0).data();
  const std::string& with_another = batched_response.images(1).data();
  ASSERT_EQ(lone.size(), with_another.size());
  int differing = 0;
  for (size_t i = 0; i < lone.size(); ++i)
    differing += lone[i] != with_another[i];
  EXPECT_EQ(differing, 0) << "of " << lone.size() << " RGB8 bytes";
}

TEST_F(ServingTest, APromptSeenAgainSkipsTheTextEncodersAndKeepsItsImage) {
  absl::StatusOr<std::string> before = cluster_->ScrapeMetrics();
  ASSERT_TRUE(before.ok()) << before.status();
  const auto lookups = [](const std::string& metrics, const char* result) {
    return MetricValue(metrics, "ditserve_prompt_cache_lookups_total",
                       {absl::StrCat("result=\"", result, "\"")});
  };
  v1::GenerateRequest request = SmallRequest("a prompt only this test sends");
  request.set_output_format(v1::OUTPUT_FORMAT_LATENT_F32);
  request.set_seed(77);
  v1::GenerateResponse first, second;
  ASSERT_TRUE(Generate(*cluster_, request, &first).ok());
  ASSERT_TRUE(Generate(*cluster_, request, &second).ok());
  EXPECT_EQ(first.images(0).data(), second.images(0).data());
  absl::StatusOr<std::string> after = cluster_->ScrapeMetrics();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(lookups(*after, "miss") - lookups(*before, "miss"), 1);
  EXPECT_EQ(lookups(*after, "hit") - lookups(*before, "hit"), 1);
  EXPECT_GT(MetricValue(*after, "ditserve_prompt_cache_bytes", {}), 0);
}

// A 2-rank group whose rank 1 is killed before it can join, so that the
// host waits for it, and the host's first /metrics scrape, which it answers
// while the group forms.
struct FormingHost {
  std::unique_ptr<local_cluster::RankLauncher> ranks;
  absl::StatusOr<std::string> scrape;
};

FormingHost StartFormingHost(std::vector<std::string> host_flags = {}) {
  FormingHost forming;
  absl::StatusOr<int> metrics_port = local_cluster::PickFreePort();
  if (!metrics_port.ok()) {
    forming.scrape = metrics_port.status();
    return forming;
  }
  host_flags.push_back(absl::StrCat("--metrics_port=", *metrics_port));
  absl::StatusOr<std::unique_ptr<local_cluster::RankLauncher>> ranks =
      local_cluster::LaunchRanks(
          {.world_size = 2,
           .rank_flags = {"--dp_degree=2", "--connect_timeout_s=60"},
           .host_flags = std::move(host_flags)});
  if (!ranks.ok()) {
    forming.scrape = ranks.status();
    return forming;
  }
  forming.ranks = *std::move(ranks);
  forming.ranks->Kill(1);
  for (int attempt = 0; attempt < 300; ++attempt) {
    forming.scrape = local_cluster::HttpGet(*metrics_port, "/metrics");
    if (forming.scrape.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return forming;
}

// Whether /proc/`pid`/status lists `signal` among those the process
// catches.
bool CatchesSignal(pid_t pid, int signal) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (!absl::StartsWith(line, "SigCgt:")) continue;
    const uint64_t caught = std::stoull(line.substr(7), nullptr, 16);
    return (caught >> (signal - 1)) & 1;
  }
  return false;
}

// /metrics answers while the group forms, so that Prometheus sees a host
// that loads a model for minutes as up, with only itself alive until every
// rank joins. It binds where --metrics_listen says: the scrape goes to
// 127.0.0.1, which --listen alone would not have bound.
TEST(ServingStartUpTest, MetricsAreServedWhileTheGroupForms) {
  const FormingHost forming =
      StartFormingHost({"--listen=127.0.0.2", "--metrics_listen=127.0.0.1"});
  ASSERT_TRUE(forming.scrape.ok())
      << forming.scrape.status() << "\n"
      << (forming.ranks ? forming.ranks->Output(0) : "");
  EXPECT_EQ(MetricValue(*forming.scrape, "ditserve_ranks_alive", {}), 1);
  EXPECT_EQ(MetricValue(*forming.scrape, "ditserve_world_size", {}), 2);
  EXPECT_THAT(forming.ranks->Exited(), ::testing::ElementsAre(1))
      << "the host is still forming";
}

// Before the group forms nothing was admitted, so SIGTERM ends the host at
// once, by that signal. As a container's PID 1 the host only gets signals
// it catches: without a handler a rollout waits out its grace period.
TEST(ServingStartUpTest, SigtermWhileTheGroupFormsEndsTheHostAtOnce) {
  const FormingHost forming = StartFormingHost();
  ASSERT_TRUE(forming.scrape.ok())
      << forming.scrape.status() << "\n"
      << (forming.ranks ? forming.ranks->Output(0) : "");
  EXPECT_TRUE(CatchesSignal(forming.ranks->pid(0), SIGTERM));
  forming.ranks->Signal(0, SIGTERM);
  const RankExit exit = forming.ranks->Wait(0, std::chrono::seconds(10));
  EXPECT_EQ(exit.signal, SIGTERM) << forming.ranks->Output(0);
  EXPECT_FALSE(exit.timed_out);
}

// Whether rank 1 says, within 10 s, that it serves the group. The host
// serves once it read every rank's report of its load; the worker reads the
// host's a moment later, and a signal before that ends it at once.
bool WorkerServes(ServingCluster& cluster) {
  // Not "joined generation" alone: the rendezvous says that before the load.
  return cluster.ranks().WaitForOutput(1, "ranks; serving",
                                       std::chrono::seconds(10));
}

// A second signal ends a worker at once, by that signal (as an operator
// pressing Ctrl-C twice expects, and systemd reads as a kill, not a failure).
TEST(ServingFailureTest, ASecondSignalEndsAWorkerAtOnce) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 2,
                             .rank_flags = {"--dp_degree=2"},
                             .worker_flags = {"--stop_grace_s=60"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE(WorkerServes(**cluster));
  (*cluster)->ranks().Signal(1, SIGTERM);
  ASSERT_TRUE((*cluster)->ranks().WaitForOutput(1, "following the host",
                                                std::chrono::seconds(10)));
  (*cluster)->ranks().Signal(1, SIGTERM);
  const RankExit exit = (*cluster)->ranks().Wait(1, std::chrono::seconds(10));
  EXPECT_EQ(exit.signal, SIGTERM) << (*cluster)->ranks().Output(1);
  EXPECT_FALSE(exit.timed_out);
}

TEST(ServingStartUpTest, AStopGraceOutsideItsRangeFailsStartUpNamingTheFlag) {
  EXPECT_THAT(StartUpFailure({.world_size = 2,
                              .rank_flags = {"--dp_degree=2"},
                              .worker_flags = {"--stop_grace_s=nan"}}),
              HasSubstr("--stop_grace_s nan: allowed 0 to 86400 seconds"));
}

TEST(ServingStartUpTest, NegativePromptCacheSizeFailsStartUpNamingTheFlag) {
  EXPECT_THAT(
      StartUpFailure({.world_size = 1, .rank_flags = {"--prompt_cache_mb=-1"}}),
      HasSubstr("--prompt_cache_mb must be 0 (no cache) or more, got -1"));
}

// An idle worker takes the group as broken after a collective timeout
// without a message from the host: pings must come well within it.
TEST(ServingStartUpTest, PingsSlowerThanHalfTheCollectiveTimeoutFailStartUp) {
  EXPECT_THAT(
      StartUpFailure(
          {.world_size = 1, .rank_flags = {"--collective_timeout_s=2"}}),
      HasSubstr("--ping_interval_s must be above 0 and at most half of "
                "--collective_timeout_s (2): an idle worker that hears "
                "nothing from the host for that long takes the group as "
                "broken; got 5"));
  EXPECT_THAT(StartUpFailure({.world_size = 1,
                              .rank_flags = {"--collective_timeout_s=0"}}),
              HasSubstr("--collective_timeout_s must be above 0 and at most "
                        "1000000, got 0"));
}

// Every request passes through the queue: a queue of none would refuse them
// all, and the HTTP API holds a thread for each place in it.
TEST(ServingStartUpTest, QueueLimitOutsideItsRangeFailsStartUpNamingTheFlag) {
  EXPECT_THAT(
      StartUpFailure({.world_size = 1, .host_flags = {"--max_queue=0"}}),
      HasSubstr("--max_queue 0: allowed 1 to 10000"));
  EXPECT_THAT(StartUpFailure(
                  {.world_size = 1, .host_flags = {"--max_queue=2000000000"}}),
              HasSubstr("--max_queue 2000000000: allowed 1 to 10000"));
}

TEST(ServingStartUpTest, ANegativeDrainTimeoutFailsStartUpNamingTheFlag) {
  EXPECT_THAT(
      StartUpFailure({.world_size = 1, .host_flags = {"--drain_timeout_s=-1"}}),
      HasSubstr("--drain_timeout_s -1: allowed 0 (no wait) or more"));
}

TEST_F(ServingTest, StreamSendsAcceptedThenEveryStepThenTheResult) {
  v1::GenerateRequest request = SmallRequest("streamed");
  request.set_num_inference_steps(3);
  auto context = ContextWithDeadline(kCallSeconds);
  auto reader = cluster_->generation().GenerateStream(context.get(), request);
  std::vector<v1::GenerateStreamResponse::EventCase> events;
  std::vector<int> steps;
  v1::GenerateStreamResponse message;
  while (reader->Read(&message)) {
    events.push_back(message.event_case());
    if (message.has_progress()) steps.push_back(message.progress().step());
    if (message.has_result()) {
      EXPECT_EQ(message.result().images_size(), 1);
    }
  }
  ASSERT_TRUE(reader->Finish().ok());
  ASSERT_GE(events.size(), 5U);
  EXPECT_EQ(events.front(), v1::GenerateStreamResponse::kAccepted);
  EXPECT_EQ(events.back(), v1::GenerateStreamResponse::kResult);
  EXPECT_THAT(steps, ::testing::ElementsAre(1, 2, 3));
}

// Outputs each under the chunk size but together over it: the result keeps
// those that fit in one chunk's size and the rest come as chunks, so that
// the result stays under a client's default 4 MiB receive limit whatever
// the output count. 3 RGB8 images of 384² are 3 × 442 368 bytes, the
// chunk size 1 MiB (generation.proto).
TEST_F(ServingTest, StreamResultHoldsAtMostOneChunkOfOutputs) {
  constexpr int64_t kChunkBytes = int64_t{1} << 20;
  v1::GenerateRequest request = SmallRequest("many outputs");
  request.add_prompt("many outputs, two");
  request.add_prompt("many outputs, three");
  request.set_height(384);
  request.set_width(384);
  request.set_num_inference_steps(1);
  request.set_output_format(v1::OUTPUT_FORMAT_RGB8);
  constexpr int64_t kImageBytes = int64_t{384} * 384 * 3;
  auto context = ContextWithDeadline(kCallSeconds);
  auto reader = cluster_->generation().GenerateStream(context.get(), request);
  std::map<int, std::string> chunked;
  v1::GenerateResponse result;
  v1::GenerateStreamResponse message;
  while (reader->Read(&message)) {
    if (message.has_image_chunk()) {
      const auto& chunk = message.image_chunk();
      std::string& data = chunked[chunk.image_index()];
      EXPECT_EQ(chunk.offset(), static_cast<int64_t>(data.size()));
      EXPECT_EQ(chunk.total_bytes(), kImageBytes);
      data += chunk.data();
    } else if (message.has_result()) {
      result = message.result();
    }
  }
  ASSERT_TRUE(reader->Finish().ok());
  ASSERT_EQ(result.images_size(), 3);
  int64_t inline_bytes = 0;
  for (int i = 0; i < 3; ++i) {
    const std::string& data = result.images(i).data();
    inline_bytes += static_cast<int64_t>(data.size());
    EXPECT_EQ(
        static_cast<int64_t>(data.empty() ? chunked[i].size() : data.size()),
        kImageBytes)
        << "output " << i;
  }
  EXPECT_LE(inline_bytes, kChunkBytes);
  EXPECT_EQ(chunked.size(), 1u);
}

TEST_F(ServingTest, FullQueueIsResourceExhausted) {
  RunningStream running =
      StartAndWaitForFirstStep(*cluster_, LongRequest(), kCallSeconds);
  // --max_queue=1: one request may wait, the next is refused.
  grpc::Status queued_status;
  std::thread queued([&] {
    v1::GenerateResponse response;
    queued_status = Generate(*cluster_, SmallRequest("queued"), &response);
  });
  EXPECT_TRUE(WaitForQueueDepth(*cluster_, 1, kQueueWait));
  v1::GenerateResponse response;
  const grpc::Status refused =
      Generate(*cluster_, SmallRequest("one too many"), &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << refused.error_message();
  EXPECT_THAT(refused.error_message(), HasSubstr("queue is full"));
  EXPECT_TRUE(cluster_->ranks().WaitForOutput(
      0, "refused status=resource_exhausted: queue is full",
      std::chrono::seconds(5)));
  running.context->TryCancel();
  queued.join();
  EXPECT_TRUE(queued_status.ok()) << queued_status.error_message();
}

// A one-rank group under --max_queue_wait_s, busy with a long run that the
// tests' requests queue behind.
class ServingQueueWaitTest : public ::testing::Test {
 protected:
  void StartBehindALongRun(int max_queue_wait_s) {
    absl::StatusOr<std::unique_ptr<ServingCluster>> started =
        ServingCluster::Start({.world_size = 1,
                               .host_flags = {absl::StrCat(
                                   "--max_queue_wait_s=", max_queue_wait_s)}});
    ASSERT_TRUE(started.ok()) << started.status();
    cluster_ = *std::move(started);
    running_ = StartAndWaitForFirstStep(*cluster_, LongRequest(), kCallSeconds);
  }

  std::unique_ptr<ServingCluster> cluster_;
  RunningStream running_;
};

// Under --max_queue_wait_s a request that cannot start in time is answered
// at the limit, while the run ahead of it goes on, not when that run ends.
TEST_F(ServingQueueWaitTest, ARequestQueuedPastTheLimitIsRefusedDuringTheRun) {
  ASSERT_NO_FATAL_FAILURE(StartBehindALongRun(1));
  v1::GenerateResponse response;
  const grpc::Status refused =
      Generate(*cluster_, SmallRequest("waits too long"), &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << refused.error_message();
  EXPECT_THAT(refused.error_message(),
              HasSubstr("longer than --max_queue_wait_s 1; the server is "
                        "overloaded, retry later or elsewhere"));
  absl::StatusOr<std::string> metrics = cluster_->ScrapeMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(MetricValue(*metrics, "ditserve_requests_running", {}), 1)
      << "refused while the long run still ran";
  EXPECT_EQ(MetricValue(*metrics, "ditserve_queue_depth", {}), 0);
  EXPECT_TRUE(cluster_->ranks().WaitForOutput(
      0,
      "refused 1 queued requests that waited longer than --max_queue_wait_s "
      "1",
      std::chrono::seconds(5)));
  running_.CancelAndDrain();
}

// The limit holds through a drain too: a request admitted before SIGTERM
// that cannot start in time is answered at the limit, not when the run ahead
// of it ends (or at --drain_timeout_s). The limit is long enough for the
// request to still be waiting when the signal comes.
TEST_F(ServingQueueWaitTest,
       ARequestQueuedPastTheLimitIsRefusedDuringTheDrain) {
  ASSERT_NO_FATAL_FAILURE(StartBehindALongRun(4));
  grpc::Status queued_status;
  std::thread queued([&] {
    v1::GenerateResponse response;
    queued_status =
        Generate(*cluster_, SmallRequest("waits through the drain"), &response);
  });
  EXPECT_TRUE(WaitForQueueDepth(*cluster_, 1, kQueueWait));
  cluster_->Terminate();
  constexpr char kDraining[] = "stopping: draining admitted requests";
  constexpr char kShed[] =
      "refused 1 queued requests that waited longer than --max_queue_wait_s "
      "4";
  EXPECT_TRUE(
      cluster_->ranks().WaitForOutput(0, kDraining, std::chrono::seconds(5)));
  EXPECT_TRUE(
      cluster_->ranks().WaitForOutput(0, kShed, std::chrono::seconds(10)));
  queued.join();
  EXPECT_EQ(queued_status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << queued_status.error_message();
  EXPECT_THAT(queued_status.error_message(),
              HasSubstr("longer than --max_queue_wait_s 4"));
  const std::string log = cluster_->ranks().Output(0);
  EXPECT_LT(log.find(kDraining), log.find(kShed))
      << "refused before the drain began: the test did not reach the drain";
  running_.CancelAndDrain();
}

TEST_F(ServingTest, CancelMidRunStopsTheRunAndTheGroupServesTheNextRequest) {
  absl::StatusOr<std::string> before = cluster_->ScrapeMetrics();
  ASSERT_TRUE(before.ok());
  const double steps_before =
      MetricValue(*before, "ditserve_denoise_step_duration_seconds_count", {});
  RunningStream running =
      StartAndWaitForFirstStep(*cluster_, LongRequest(), kCallSeconds);
  running.CancelAndDrain();
  EXPECT_EQ(running.reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  v1::GenerateResponse response;
  const grpc::Status next =
      Generate(*cluster_, SmallRequest("after the cancel"), &response);
  ASSERT_TRUE(next.ok()) << next.error_message();
  absl::StatusOr<std::string> after = cluster_->ScrapeMetrics();
  ASSERT_TRUE(after.ok());
  const double steps_run =
      MetricValue(*after, "ditserve_denoise_step_duration_seconds_count", {}) -
      steps_before;
  // The 200-step run stopped early: far fewer steps than it asked for.
  EXPECT_LT(steps_run, 100) << "steps run: " << steps_run;
  EXPECT_GE(RequestsCounted(*after, "cancelled"), 1);
}

TEST_F(ServingTest, DeadlinePassingWhileRunningIsDeadlineExceeded) {
  absl::StatusOr<std::string> before = cluster_->ScrapeMetrics();
  ASSERT_TRUE(before.ok());
  v1::GenerateResponse response;
  const grpc::Status status =
      Generate(*cluster_, LongRequest(), &response, /*seconds=*/3);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  const grpc::Status next =
      Generate(*cluster_, SmallRequest("after the deadline"), &response);
  ASSERT_TRUE(next.ok()) << next.error_message();
  // gRPC also cancels the call when its deadline passes; the request still
  // counts as deadline_exceeded, not cancelled.
  absl::StatusOr<std::string> after = cluster_->ScrapeMetrics();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(RequestsCounted(*after, "deadline_exceeded") -
                RequestsCounted(*before, "deadline_exceeded"),
            1);
  EXPECT_EQ(RequestsCounted(*after, "cancelled"),
            RequestsCounted(*before, "cancelled"));
}

// A client that cancels after the last step, while rank 0 still decodes its
// images, never gets them: the request counts as cancelled, not ok.
TEST_F(ServingTest, CancelWhileDecodingCountsAsCancelledNotOk) {
  absl::StatusOr<std::string> before = cluster_->ScrapeMetrics();
  ASSERT_TRUE(before.ok());
  // One step, then two 1024x1024 decodes on rank 0 (about a second each):
  // the cancel sent at the step's progress event lands during them.
  v1::GenerateRequest request = SmallRequest("cancelled while decoding");
  request.add_prompt("a second image to decode");
  request.set_height(1024);
  request.set_width(1024);
  request.set_num_inference_steps(1);
  RunningStream running =
      StartAndWaitForFirstStep(*cluster_, request, kCallSeconds);
  running.CancelAndDrain();
  EXPECT_EQ(running.reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  // The host settles the request once the decode ends.
  const auto answered = [&](const std::string& metrics) {
    return RequestsCounted(metrics, "ok") +
               RequestsCounted(metrics, "cancelled") >
           RequestsCounted(*before, "ok") +
               RequestsCounted(*before, "cancelled");
  };
  const auto give_up = std::chrono::steady_clock::now() + kQueueWait;
  absl::StatusOr<std::string> after = cluster_->ScrapeMetrics();
  while (after.ok() && !answered(*after) &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    after = cluster_->ScrapeMetrics();
  }
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(RequestsCounted(*after, "cancelled") -
                RequestsCounted(*before, "cancelled"),
            1);
  EXPECT_EQ(RequestsCounted(*after, "ok"), RequestsCounted(*before, "ok"));
}

struct QueuedOutcome {
  std::vector<grpc::Status> statuses;
  std::vector<v1::GenerateResponse> responses;
};

// Sends each of `queued` from a client thread of its own while `long_request`
// runs, and cancels that run once all of them wait in the queue, so that the
// scheduler batches them as it sees fit.
QueuedOutcome RunQueuedBehind(ServingCluster& cluster,
                              const v1::GenerateRequest& long_request,
                              const std::vector<v1::GenerateRequest>& queued) {
  RunningStream running =
      StartAndWaitForFirstStep(cluster, long_request, kCallSeconds);
  QueuedOutcome outcome{
      .statuses = std::vector<grpc::Status>(queued.size()),
      .responses = std::vector<v1::GenerateResponse>(queued.size())};
  std::vector<std::thread> clients;
  for (size_t i = 0; i < queued.size(); ++i) {
    clients.emplace_back([&, i] {
      outcome.statuses[i] = Generate(cluster, queued[i], &outcome.responses[i]);
    });
  }
  EXPECT_TRUE(
      WaitForQueueDepth(cluster, static_cast<int>(queued.size()), kQueueWait));
  running.CancelAndDrain();
  for (std::thread& client : clients) client.join();
  return outcome;
}

// Requests that queue behind a running one and differ only in prompts and
// seeds run as one config (up to --max_batch images); each client still gets
// exactly the images its request gets alone, and its own config.
TEST(ServingBatchTest, QueuedCompatibleRequestsShareARunAndKeepTheirImages) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 2,
                             .rank_flags = {"--dp_degree=2"},
                             .host_flags = {"--max_queue=8", "--max_batch=4"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto latent_request = [](const std::string& prompt, uint64_t seed,
                           const std::string& id) {
    v1::GenerateRequest request = SmallRequest(prompt);
    request.set_seed(seed);
    request.set_request_id(id);
    request.set_output_format(v1::OUTPUT_FORMAT_LATENT_F32);
    return request;
  };
  const std::vector<v1::GenerateRequest> compatible = {
      latent_request("a red barn", 11, "barn"),
      latent_request("a blue door", 22, "door")};
  v1::GenerateRequest other_size = latent_request("a tall tower", 33, "tower");
  other_size.set_height(96);
  std::vector<v1::GenerateResponse> alone(compatible.size());
  for (size_t i = 0; i < compatible.size(); ++i) {
    ASSERT_TRUE(Generate(**cluster, compatible[i], &alone[i]).ok());
  }
  absl::StatusOr<std::string> before = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(before.ok()) << before.status();

  std::vector<v1::GenerateRequest> queued = compatible;
  queued.insert(queued.begin() + 1, other_size);
  const auto [statuses, responses] =
      RunQueuedBehind(**cluster, LongRequest(), queued);

  for (size_t i = 0; i < queued.size(); ++i) {
    ASSERT_TRUE(statuses[i].ok()) << i << ": " << statuses[i].error_message();
    ASSERT_EQ(responses[i].images_size(), 1) << i;
    EXPECT_EQ(responses[i].config().request_id(), queued[i].request_id());
    EXPECT_THAT(responses[i].config().prompt(),
                ::testing::ElementsAre(queued[i].prompt(0)));
  }
  EXPECT_EQ(responses[0].images(0).data(), alone[0].images(0).data());
  EXPECT_EQ(responses[2].images(0).data(), alone[1].images(0).data());

  absl::StatusOr<std::string> after = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(after.ok()) << after.status();
  auto delta = [&](const std::string& metric) {
    return MetricValue(*after, metric, {}) - MetricValue(*before, metric, {});
  };
  // Three runs: the cancelled long one, the two compatible requests
  // together, the other size alone.
  EXPECT_EQ(delta("ditserve_run_batch_requests_count"), 3);
  EXPECT_EQ(delta("ditserve_run_batch_requests_sum"), 4);
}

// A queued request joins a run only while the merged run stays within
// --max_request_bytes: with 512 text tokens a 64×48 image of the built-in
// tiny model needs an estimated 9 MiB (its transformer forward) and two of
// them 19 MiB, so under 12 MiB two compatible requests that would share a run
// (the test above) run one after the other.
TEST(ServingBatchTest, QueuedRequestsThatTogetherExceedTheMemoryLimitRunApart) {
  constexpr int64_t kLimit = int64_t{12} << 20;
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 1,
           .host_flags = {"--max_queue=8", "--max_batch=4",
                          "--max_inference_steps=5000",
                          "--max_request_bytes=" + std::to_string(kLimit)}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  absl::StatusOr<std::string> before = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(before.ok()) << before.status();

  auto request = [](const std::string& prompt) {
    v1::GenerateRequest request = SmallRequest(prompt);
    request.set_max_sequence_length(512);
    return request;
  };
  // Long enough to queue behind, and within the limit itself.
  v1::GenerateRequest long_one = request("a long one");
  long_one.set_num_inference_steps(5000);
  const std::vector<v1::GenerateRequest> queued = {request("a red barn"),
                                                   request("a blue door")};
  const auto [statuses, responses] =
      RunQueuedBehind(**cluster, long_one, queued);

  for (size_t i = 0; i < queued.size(); ++i) {
    ASSERT_TRUE(statuses[i].ok()) << i << ": " << statuses[i].error_message();
    EXPECT_EQ(responses[i].images_size(), 1) << i;
  }
  absl::StatusOr<std::string> after = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(after.ok()) << after.status();
  auto delta = [&](const std::string& metric) {
    return MetricValue(*after, metric, {}) - MetricValue(*before, metric, {});
  };
  // Three runs of one request each: the cancelled long one, then each
  // queued request alone.
  EXPECT_EQ(delta("ditserve_run_batch_requests_count"), 3);
  EXPECT_EQ(delta("ditserve_run_batch_requests_sum"), 3);
}

TEST_F(ServingTest, MetricsCountEveryStageOfEveryRequest) {
  absl::StatusOr<std::string> before = cluster_->ScrapeMetrics();
  ASSERT_TRUE(before.ok()) << before.status();
  constexpr int kRequests = 2;
  // Two prompts, so that rank 1 (the second data-parallel group) denoises.
  v1::GenerateRequest request = SmallRequest("counted");
  request.add_prompt("counted too");
  for (int i = 0; i < kRequests; ++i) {
    v1::GenerateResponse response;
    ASSERT_TRUE(Generate(*cluster_, request, &response).ok());
  }
  absl::StatusOr<std::string> after = cluster_->ScrapeMetrics();
  ASSERT_TRUE(after.ok()) << after.status();
  for (const char* stage :
       {"queue", "freeze", "broadcast", "prepare", "text_encode", "denoise",
        "vae_decode", "gather", "encode", "total"}) {
    const std::string label = absl::StrCat("stage=\"", stage, "\"");
    EXPECT_THAT(*after, HasSubstr(label));
    EXPECT_EQ(
        MetricValue(*after, "ditserve_stage_duration_seconds_count", {label}) -
            MetricValue(*before, "ditserve_stage_duration_seconds_count",
                        {label}),
        kRequests)
        << stage;
  }
  EXPECT_EQ(RequestsCounted(*after, "ok") - RequestsCounted(*before, "ok"),
            kRequests);
  // The steps are the denoise stage's: broadcast, prepare and text encoding
  // come before the first (slack for the two clocks the times are read
  // from).
  const auto added = [&](const char* name, std::vector<std::string> labels) {
    return MetricValue(*after, name, labels) -
           MetricValue(*before, name, labels);
  };
  EXPECT_EQ(added("ditserve_denoise_step_duration_seconds_count", {}),
            kRequests * request.num_inference_steps());
  EXPECT_LE(
      added("ditserve_denoise_step_duration_seconds_sum", {}),
      added("ditserve_stage_duration_seconds_sum", {"stage=\"denoise\""}) +
          0.0005);
  EXPECT_GT(MetricValue(*after, "ditserve_rank_stage_duration_seconds_count",
                        {"rank=\"1\"", "stage=\"denoise\""}),
            0);
  EXPECT_EQ(MetricValue(*after, "ditserve_world_size", {}), 2);
  EXPECT_EQ(MetricValue(*after, "ditserve_ranks_alive", {}), 2);
  EXPECT_THAT(*after, HasSubstr("ditserve_build_info{"));
  // Each rank reports its resident memory with its stage times; a rank
  // holding LibTorch and its weights has more than 50 MB resident.
  for (const std::string rank : {"rank=\"0\"", "rank=\"1\""}) {
    const double resident = MetricValue(*after, "ditserve_rank_memory_bytes",
                                        {rank, "kind=\"resident\""});
    EXPECT_GT(resident, 50e6) << rank;
    EXPECT_GE(MetricValue(*after, "ditserve_rank_memory_bytes",
                          {rank, "kind=\"peak_resident\""}),
              resident)
        << rank;
  }
  // The GPU kinds are a GPU rank's alone.
  EXPECT_THAT(*after, Not(HasSubstr("kind=\"device_")));
}

// A higher priority admitted later runs before a lower one queued earlier:
// while the high one (long) runs, the low one (short) still waits.
TEST(ServingPriorityTest, AHigherPriorityAdmittedLaterRunsFirst) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 1, .host_flags = {"--max_queue=4"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  RunningStream blocker =
      StartAndWaitForFirstStep(**cluster, LongRequest(), kCallSeconds);
  const auto admit = [&](v1::GenerateRequest request, int priority,
                         RunningStream& stream) {
    request.set_priority(priority);
    stream.context = ContextWithDeadline(kCallSeconds);
    stream.reader =
        (*cluster)->generation().GenerateStream(stream.context.get(), request);
    v1::GenerateStreamResponse accepted;
    EXPECT_TRUE(stream.reader->Read(&accepted) && accepted.has_accepted());
    EXPECT_EQ(accepted.accepted().config().priority(), priority);
    return accepted.accepted().queue_position();
  };
  RunningStream low, high;
  EXPECT_EQ(admit(SmallRequest("low"), -1, low), 0);
  EXPECT_EQ(admit(LongRequest(), 5, high), 0) << "ahead of the low one";

  blocker.CancelAndDrain();
  v1::GenerateStreamResponse message;
  bool high_runs = false;
  while (!high_runs && high.reader->Read(&message)) {
    high_runs = message.has_progress();
  }
  ASSERT_TRUE(high_runs);
  absl::StatusOr<std::string> metrics = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(MetricValue(*metrics, "ditserve_queue_depth", {}), 1)
      << "the low one waits while the high one runs";

  high.CancelAndDrain();
  bool low_done = false;
  while (low.reader->Read(&message)) {
    low_done = low_done || message.has_result();
  }
  EXPECT_TRUE(low.reader->Finish().ok());
  EXPECT_TRUE(low_done);
}

// A request cancelled while it shares a run leaves at the next step; the
// request it shared with runs on and still gets the image it gets alone.
TEST(ServingBatchTest, CancelledRequestLeavesASharedRunThatGoesOn) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 2,
                             .rank_flags = {"--dp_degree=2"},
                             .host_flags = {"--max_queue=8", "--max_batch=4"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  // Long enough that the cancel lands mid-run on any machine, short enough
  // to run to the end here in seconds.
  auto request = [](const std::string& prompt, const std::string& id) {
    v1::GenerateRequest request = SmallRequest(prompt);
    request.set_num_inference_steps(200);
    request.set_request_id(id);
    request.set_output_format(v1::OUTPUT_FORMAT_LATENT_F32);
    return request;
  };
  const v1::GenerateRequest leaving = request("a paper boat", "leaving");
  const v1::GenerateRequest staying = request("a stone bridge", "staying");
  v1::GenerateResponse alone;
  ASSERT_TRUE(Generate(**cluster, staying, &alone).ok());
  absl::StatusOr<std::string> before = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(before.ok()) << before.status();

  RunningStream blocker =
      StartAndWaitForFirstStep(**cluster, LongRequest(), kCallSeconds);
  RunningStream shared;
  std::thread leaving_client([&] {
    shared = StartAndWaitForFirstStep(**cluster, leaving, kCallSeconds);
  });
  grpc::Status staying_status;
  v1::GenerateResponse staying_response;
  std::thread staying_client([&] {
    staying_status = Generate(**cluster, staying, &staying_response);
  });
  EXPECT_TRUE(WaitForQueueDepth(**cluster, 2, kQueueWait));
  blocker.CancelAndDrain();
  leaving_client.join();
  shared.CancelAndDrain();
  EXPECT_EQ(shared.reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  staying_client.join();

  ASSERT_TRUE(staying_status.ok()) << staying_status.error_message();
  ASSERT_EQ(staying_response.images_size(), 1);
  EXPECT_EQ(staying_response.images(0).data(), alone.images(0).data());
  absl::StatusOr<std::string> after = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(after.ok()) << after.status();
  // Two runs: the blocker alone, then the two requests together.
  auto delta = [&](const std::string& metric) {
    return MetricValue(*after, metric, {}) - MetricValue(*before, metric, {});
  };
  EXPECT_EQ(delta("ditserve_run_batch_requests_count"), 2);
  EXPECT_EQ(delta("ditserve_run_batch_requests_sum"), 3);
}

// Health must report NOT_SERVING within 5 s of a broken group.
void ExpectHealthTurnsNotServing(ServingCluster& cluster) {
  absl::StatusOr<HealthStatus::ServingStatus> health;
  for (int i = 0; i < 50; ++i) {
    health = cluster.HealthStatus();
    if (health.ok() && *health == HealthStatus::NOT_SERVING) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(*health, HealthStatus::NOT_SERVING);
}

TEST(ServingFailureTest, KilledWorkerFailsTheRequestNamingItAndHealthDrops) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 2,
           .rank_flags = {"--dp_degree=2", "--collective_timeout_s=10"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  RunningStream running =
      StartAndWaitForFirstStep(**cluster, LongRequest(), /*seconds=*/60);
  (*cluster)->ranks().Kill(1);
  v1::GenerateStreamResponse message;
  while (running.reader->Read(&message)) {
  }
  const grpc::Status status = running.reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("rank 1"));
  ExpectHealthTurnsNotServing(**cluster);
  v1::GenerateResponse response;
  EXPECT_EQ(Generate(**cluster, SmallRequest("after the loss"), &response, 30)
                .error_code(),
            grpc::StatusCode::UNAVAILABLE);
  // The host itself is alive: one of two ranks, not zero. The count follows
  // the watchdog's observation window, so it may lag health by seconds.
  double alive = 2;
  for (int i = 0; i < 100 && alive == 2; ++i) {
    absl::StatusOr<std::string> metrics = (*cluster)->ScrapeMetrics();
    ASSERT_TRUE(metrics.ok()) << metrics.status();
    alive = MetricValue(*metrics, "ditserve_ranks_alive", {});
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(alive, 1);
}

// SIGSTOP keeps a worker's sockets open, so only its silent heartbeat tells
// the host: the request must fail within --hung_rank_timeout_s plus a
// heartbeat or two and the rest of the step rank 0 computes meanwhile, not
// after the 60 s collective timeout. SIGCONT then brings the group back.
TEST(ServingFailureTest, StoppedWorkerFailsTheRequestInTimeAndRejoinsOnResume) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 2,
           .rank_flags = {"--dp_degree=2", "--hung_rank_timeout_s=3"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  // Steps a fraction of the hung-rank timeout long, so the bound tests the
  // heartbeat and not how fast this machine computes a step.
  v1::GenerateRequest request = LongRequest();
  request.set_height(512);
  request.set_width(512);
  RunningStream running =
      StartAndWaitForFirstStep(**cluster, request, /*seconds=*/120);
  (*cluster)->ranks().Signal(1, SIGSTOP);
  const auto stopped = std::chrono::steady_clock::now();
  v1::GenerateStreamResponse message;
  while (running.reader->Read(&message)) {
  }
  const grpc::Status status = running.reader->Finish();
  const double detected_after =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped)
          .count();
  std::cout << "stopped worker detected after " << detected_after << " s\n";
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("rank 1 stopped answering"));
  EXPECT_LT(detected_after, 10);
  ExpectHealthTurnsNotServing(**cluster);
  // Resumed, the worker leaves the abandoned generation and joins the one the
  // host re-forms: no process restarts.
  (*cluster)->ranks().Signal(1, SIGCONT);
  absl::StatusOr<HealthStatus::ServingStatus> health;
  for (int i = 0; i < 300; ++i) {
    health = (*cluster)->HealthStatus();
    if (health.ok() && *health == HealthStatus::SERVING) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(*health, HealthStatus::SERVING) << (*cluster)->ranks().Output(1);
  v1::GenerateResponse response;
  EXPECT_TRUE(
      Generate(**cluster, SmallRequest("after the worker resumed"), &response)
          .ok());
  EXPECT_TRUE((*cluster)->ranks().Exited().empty());
}

// A worker stopped for longer than --collective_timeout_s but shorter than
// --hung_rank_timeout_s fails the running request in a collective while
// every rank stays alive: the group re-forms at once, and the request that
// waited in the queue meanwhile runs on the re-formed group. Before, it was
// answered UNAVAILABLE with the failed one, though the host had accepted it.
TEST(ServingFailureTest, AQueuedRequestOutlivesACollectiveFailure) {
  constexpr int kCollectiveTimeoutSeconds = 3;
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 2,
           .rank_flags = {"--ulysses_degree=2",
                          absl::StrCat("--collective_timeout_s=",
                                       kCollectiveTimeoutSeconds),
                          "--hung_rank_timeout_s=10",
                          "--ping_interval_s=0.5"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::GenerateRequest failing = LongRequest();
  failing.set_height(512);
  failing.set_width(512);
  RunningStream running =
      StartAndWaitForFirstStep(**cluster, failing, kCallSeconds);
  grpc::Status queued_status;
  v1::GenerateResponse queued_response;
  std::thread queued([&] {
    queued_status =
        Generate(**cluster, SmallRequest("queued"), &queued_response);
  });
  ASSERT_TRUE(WaitForQueueDepth(**cluster, 1, kQueueWait));
  // Rank 0 gives up on its all-to-all with the stopped worker after the
  // collective timeout, then waits as long again for the rank reports, which
  // the resumed worker joins.
  (*cluster)->ranks().Signal(1, SIGSTOP);
  std::this_thread::sleep_for(
      std::chrono::milliseconds(kCollectiveTimeoutSeconds * 1000 * 4 / 3));
  (*cluster)->ranks().Signal(1, SIGCONT);
  v1::GenerateStreamResponse message;
  while (running.reader->Read(&message)) {
  }
  const grpc::Status failed = running.reader->Finish();
  // Which wait gives up first depends on where the worker stopped: the
  // all-to-all, the step boundary or the rank reports.
  EXPECT_EQ(failed.error_code(), grpc::StatusCode::UNAVAILABLE)
      << failed.error_message();
  queued.join();
  ASSERT_TRUE(queued_status.ok())
      << queued_status.error_message() << "\nrank 0:\n"
      << (*cluster)->ranks().Output(0) << "rank 1:\n"
      << (*cluster)->ranks().Output(1);
  ASSERT_EQ(queued_response.images_size(), 1);
  ExpectPngOfSize(queued_response.images(0), 48, 64);
  EXPECT_TRUE((*cluster)->ranks().WaitForOutput(
      0, "every rank is alive: keeping 1 queued requests for the re-formed",
      std::chrono::seconds(5)));
  absl::StatusOr<std::string> metrics = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(MetricValue(*metrics, "ditserve_group_generation", {}), 1);
  EXPECT_TRUE((*cluster)->ranks().Exited().empty());
}

// Gloo writes to its peers with writev(), so a rank that writes into a pair
// its peer already closed gets SIGPIPE from the kernel: a stopped worker
// resuming after rank 0 gave up on it did, now and then, and vanished without
// a word instead of failing the collective and rejoining. That race is rare,
// so the signal is sent here; every rank must keep serving.
TEST(ServingFailureTest, EveryRankSurvivesSigpipe) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 2, .rank_flags = {"--ulysses_degree=2"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  for (int rank = 0; rank < 2; ++rank) {
    (*cluster)->ranks().Signal(rank, SIGPIPE);
  }
  v1::GenerateResponse response;
  const grpc::Status status =
      Generate(**cluster, SmallRequest("after SIGPIPE"), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.images_size(), 1);
  EXPECT_TRUE((*cluster)->ranks().Exited().empty());
}

// Rank 0 decodes alone after the gather while the workers wait for its next
// message; a decode far longer than their control timeout must not look like
// a lost host (rank 0 keeps pinging them meanwhile).
TEST(ServingFailureTest, DecodeLongerThanTheCollectiveTimeoutKeepsTheGroup) {
  constexpr double kCollectiveTimeoutSeconds = 2;
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 2,
           .rank_flags = {absl::StrCat("--collective_timeout_s=",
                                       kCollectiveTimeoutSeconds),
                          "--ping_interval_s=0.5"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  // Four 1024x1024 images (the most a request may ask for): the tiny
  // model's VAE takes about a second each on one thread (two took 1.9 s
  // once oneDNN ran every convolution), while denoising a single step stays
  // short.
  v1::GenerateRequest request = SmallRequest("a long decode");
  for (const char* prompt : {"and another one", "a third", "a fourth"}) {
    request.add_prompt(prompt);
  }
  request.set_height(1024);
  request.set_width(1024);
  request.set_num_inference_steps(1);
  v1::GenerateResponse response;
  const grpc::Status status = Generate(**cluster, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  double decode_seconds = 0;
  for (const v1::StageTiming& timing : response.timings()) {
    if (timing.stage() == "vae_decode" && timing.rank() == 0) {
      decode_seconds = timing.seconds();
    }
  }
  EXPECT_GT(decode_seconds, kCollectiveTimeoutSeconds)
      << "the decode was too short to test the workers' wait";
  v1::GenerateResponse next;
  const grpc::Status next_status =
      Generate(**cluster, SmallRequest("the group is still whole"), &next);
  EXPECT_TRUE(next_status.ok()) << next_status.error_message();
  absl::StatusOr<HealthStatus::ServingStatus> health =
      (*cluster)->HealthStatus();
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(*health, HealthStatus::SERVING);
}

// A 2-rank group runs a 12-step request; SIGTERM reaches the host (and with
// `worker_too` the worker first, as supervisors signal every rank at once:
// the worker keeps following the host, whose drain finishes the run). The
// request must finish and every rank exit 0 once the host shuts the group
// down; a worker that died at the signal failed the request.
void ExpectSigtermLetsTheRunningRequestFinish(bool worker_too) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 2, .rank_flags = {"--dp_degree=2"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::GenerateRequest request = SmallRequest("finishes after the signal");
  request.set_height(256);
  request.set_width(256);
  request.set_num_inference_steps(12);
  RunningStream running =
      StartAndWaitForFirstStep(**cluster, request, kCallSeconds);
  if (worker_too) (*cluster)->ranks().Signal(1, SIGTERM);
  (*cluster)->Terminate();
  v1::GenerateStreamResponse message;
  bool got_result = false;
  while (running.reader->Read(&message)) {
    got_result = got_result || message.has_result();
  }
  const grpc::Status finished = running.reader->Finish();
  EXPECT_TRUE(finished.ok()) << finished.error_message();
  EXPECT_TRUE(got_result);
  for (const RankExit& exit :
       (*cluster)->ranks().WaitAll(std::chrono::seconds(60))) {
    EXPECT_EQ(exit.exit_code, 0) << "rank " << exit.rank << " output:\n"
                                 << (*cluster)->ranks().Output(exit.rank);
    EXPECT_FALSE(exit.timed_out) << "rank " << exit.rank;
  }
}

TEST(ServingFailureTest, SigtermLetsTheRunningRequestFinishThenAllExitZero) {
  ExpectSigtermLetsTheRunningRequestFinish(/*worker_too=*/false);
}

TEST(ServingFailureTest, SigtermToEveryRankLetsTheRunningRequestFinish) {
  ExpectSigtermLetsTheRunningRequestFinish(/*worker_too=*/true);
}

// A worker stopped alone follows its serving group for --stop_grace_s, then
// ends by the signal (and the host re-forms without it).
TEST(ServingFailureTest, AWorkerStoppedAloneLeavesAfterItsGrace) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 2,
                             .rank_flags = {"--dp_degree=2"},
                             .worker_flags = {"--stop_grace_s=2"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE(WorkerServes(**cluster));
  const auto signalled = std::chrono::steady_clock::now();
  (*cluster)->ranks().Signal(1, SIGTERM);
  const RankExit exit = (*cluster)->ranks().Wait(1, std::chrono::seconds(30));
  const double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - signalled)
                             .count();
  EXPECT_EQ(exit.signal, SIGTERM) << (*cluster)->ranks().Output(1);
  EXPECT_FALSE(exit.timed_out);
  EXPECT_GE(seconds, 1.9);
  EXPECT_THAT((*cluster)->ranks().Output(1),
              HasSubstr("(--stop_grace_s passed)"));
}

// Past --drain_timeout_s the host answers its queued request and stops the
// running one after its step, both UNAVAILABLE, and every rank exits 0: a
// supervisor's kill at the end of its grace period would otherwise find it
// still running and leave its clients a reset connection.
TEST(ServingFailureTest, SigtermPastTheDrainTimeoutAnswersEveryRequest) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 2,
                             .rank_flags = {"--dp_degree=2"},
                             .host_flags = {"--drain_timeout_s=1"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const v1::GenerateRequest long_request = LongRequest();
  RunningStream running =
      StartAndWaitForFirstStep(**cluster, long_request, kCallSeconds);
  grpc::Status queued_status;
  std::thread queued([&] {
    v1::GenerateResponse response;
    queued_status = Generate(**cluster, SmallRequest("queued"), &response);
  });
  ASSERT_TRUE(WaitForQueueDepth(**cluster, 1, kQueueWait));
  (*cluster)->Terminate();

  v1::GenerateStreamResponse message;
  int last_step = 0;
  bool got_result = false;
  while (running.reader->Read(&message)) {
    if (message.has_progress()) last_step = message.progress().step();
    got_result = got_result || message.has_result();
  }
  const grpc::Status stopped = running.reader->Finish();
  EXPECT_EQ(stopped.error_code(), grpc::StatusCode::UNAVAILABLE)
      << stopped.error_message();
  EXPECT_THAT(stopped.error_message(),
              HasSubstr("drain timeout (--drain_timeout_s) passed; stopped "
                        "after step"));
  EXPECT_FALSE(got_result);
  EXPECT_LT(last_step, long_request.num_inference_steps());
  queued.join();
  EXPECT_EQ(queued_status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << queued_status.error_message();
  EXPECT_THAT(queued_status.error_message(),
              HasSubstr("shut down before the request could run"));
  for (const RankExit& exit :
       (*cluster)->ranks().WaitAll(std::chrono::seconds(60))) {
    EXPECT_EQ(exit.exit_code, 0) << "rank " << exit.rank << " output:\n"
                                 << (*cluster)->ranks().Output(exit.rank);
    EXPECT_FALSE(exit.timed_out) << "rank " << exit.rank;
  }
}

}  // namespace
}  // namespace ditserve::testing
