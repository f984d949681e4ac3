// Previews (GenerateRequest.partial_images) as a user meets them:
// ditserve-host and ditserve-worker on loopback streaming, after the steps
// the frozen config names, each output's estimate of its clean image,
// decoded like the result, before the result; the same previews from every
// parallel layout as from a single rank; the result unchanged by them; and
// each request's own previews from a run it shares.

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/config/model_defaults.h"
#include "core/families/pixart/pixart_defaults.h"
#include "core/io/image.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/serving/tiny_model_cluster.h"
#include "tools/local_cluster/queue_depth.h"
#include "tools/local_cluster/running_stream.h"
#include "tools/local_cluster/serving_cluster.h"
#include "tools/local_cluster/shell_command.h"
#include "tools/local_cluster/streamed_generation.h"

namespace ditserve::testing {
namespace {

using ::ditserve::local_cluster::LatentFloats;
using ::ditserve::local_cluster::LongRequest;
using ::ditserve::local_cluster::MetricValue;
using ::ditserve::local_cluster::ParallelParityRequest;
using ::ditserve::local_cluster::RunningStream;
using ::ditserve::local_cluster::ServingCluster;
using ::ditserve::local_cluster::SmallRequest;
using ::ditserve::local_cluster::StartAndWaitForFirstStep;
using ::ditserve::local_cluster::StreamedGeneration;
using ::ditserve::local_cluster::StreamGeneration;
using ::ditserve::local_cluster::WaitForQueueDepth;
using ::testing::ElementsAre;

constexpr double kCallSeconds = 120;

// Largest |preview − single rank's| relative to the largest |latent| (at
// least 1): the previews are the same float32 math as the step's latents,
// which the parallel serving tests bound by 1e-5 (FLUX, absolute) and by
// 1e-5 relative (PixArt, whose first clean-sample estimate is hundreds).
constexpr float kRelativeTolerance = 1e-5F;

// Each preview of each output, by (partial_image_index, prompt_index).
std::vector<const v1::GenerateStreamResponse::PartialImage*> InOrder(
    const StreamedGeneration& streamed) {
  std::vector<const v1::GenerateStreamResponse::PartialImage*> ordered;
  for (const auto& preview : streamed.partial_images) {
    ordered.push_back(&preview);
  }
  std::sort(ordered.begin(), ordered.end(), [](const auto* a, const auto* b) {
    return std::make_pair(a->partial_image_index(), a->image().prompt_index()) <
           std::make_pair(b->partial_image_index(), b->image().prompt_index());
  });
  return ordered;
}

// Expects the LATENT_F32 output `got` to be `want` within tolerance.
void ExpectSameLatents(const v1::Image& want, const v1::Image& got,
                       const std::string& what) {
  const std::vector<float> expected = LatentFloats(want);
  const std::vector<float> actual = LatentFloats(got);
  ASSERT_EQ(actual.size(), expected.size()) << what;
  float difference = 0;
  float scale = 1;
  for (size_t v = 0; v < expected.size(); ++v) {
    ASSERT_TRUE(std::isfinite(actual[v])) << what;
    difference = std::max(difference, std::abs(actual[v] - expected[v]));
    scale = std::max(scale, std::abs(expected[v]));
  }
  std::cout << what << ": max |latent - expected| = " << difference
            << ", largest |latent| " << scale << std::endl;
  EXPECT_LE(difference, kRelativeTolerance * scale) << what;
}

// Expects the previews of `actual` to be those of `single` within
// tolerance, and each to differ from its output's result.
void ExpectSamePreviews(const StreamedGeneration& single,
                        const StreamedGeneration& actual,
                        const std::string& layout) {
  const auto expected = InOrder(single);
  const auto got = InOrder(actual);
  ASSERT_EQ(got.size(), expected.size()) << layout;
  ASSERT_FALSE(expected.empty()) << layout;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(got[i]->step(), expected[i]->step()) << layout;
    EXPECT_EQ(got[i]->partial_image_index(), expected[i]->partial_image_index())
        << layout;
    EXPECT_EQ(got[i]->image().prompt_index(),
              expected[i]->image().prompt_index())
        << layout;
    ExpectSameLatents(expected[i]->image(), got[i]->image(),
                      absl::StrCat(layout, " preview ", i));
    const v1::Image& result =
        actual.result.images(got[i]->image().prompt_index());
    EXPECT_TRUE(got[i]->image().data() != result.data())
        << layout << ": preview " << i << " is the result";
    EXPECT_EQ(got[i]->image().data().size(), result.data().size()) << layout;
  }
}

// How much `metric` (its series with `labels`) rose from the scrape
// `before` to `after`.
double Increase(const std::string& before, const std::string& after,
                const std::string& metric,
                const std::vector<std::string>& labels) {
  return MetricValue(after, metric, labels) -
         MetricValue(before, metric, labels);
}

StreamedGeneration Stream(ServingCluster& cluster,
                          const v1::GenerateRequest& request) {
  absl::StatusOr<StreamedGeneration> streamed =
      StreamGeneration(cluster, request, kCallSeconds);
  EXPECT_TRUE(streamed.ok()) << streamed.status();
  return streamed.ok() ? *std::move(streamed) : StreamedGeneration();
}

// One preview per prompt after step 1 of 2.
v1::GenerateRequest PreviewedParityRequest() {
  v1::GenerateRequest request = ParallelParityRequest();
  request.set_partial_images(1);
  return request;
}

struct LayoutCase {
  std::string name;
  int world = 1;
  std::vector<std::string> flags;
};

void PrintTo(const LayoutCase& layout, std::ostream* out) {
  *out << layout.name;
}

class PartialImageLayoutTest : public ::testing::TestWithParam<LayoutCase> {};

TEST_P(PartialImageLayoutTest, PreviewsEqualASingleRanks) {
  const LayoutCase& layout = GetParam();
  const v1::GenerateRequest request = PreviewedParityRequest();
  absl::StatusOr<std::unique_ptr<ServingCluster>> single =
      ServingCluster::Start({.world_size = 1});
  ASSERT_TRUE(single.ok()) << single.status();
  const StreamedGeneration reference = Stream(**single, request);
  single->reset();
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = layout.world, .rank_flags = layout.flags});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const StreamedGeneration streamed = Stream(**cluster, request);
  EXPECT_THAT(streamed.result.config().partial_image_steps(), ElementsAre(1));
  ExpectSamePreviews(reference, streamed, layout.name);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, PartialImageLayoutTest,
    ::testing::Values(LayoutCase{"dp2", 2, {"--dp_degree=2"}},
                      LayoutCase{"ulysses2", 2, {"--ulysses_degree=2"}},
                      LayoutCase{"ring2", 2, {"--ring_degree=2"}},
                      LayoutCase{"pipefusion2",
                                 2,
                                 {"--pipefusion_degree=2", "--warmup_steps=2"}},
                      LayoutCase{"dp2_pipefusion2",
                                 4,
                                 {"--dp_degree=2", "--pipefusion_degree=2",
                                  "--warmup_steps=2"}}),
    [](const ::testing::TestParamInfo<LayoutCase>& info) {
      return info.param.name;
    });

// Classifier-free guidance split over two ranks (PixArt-Σ): each rank runs
// one branch, and rank 0's estimate uses both.
TEST(PartialImageCfgTest, PreviewsOfACfgSplitEqualASingleRanks) {
  const std::string model_dir = TinyCheckpoint(families::kPixArtSigmaDefaults);
  v1::GenerateRequest request = SmallRequest("a lighthouse at dusk");
  request.add_prompt("a fox in the snow");
  for (int i = 0; i < 2; ++i) request.add_negative_prompt("blurry");
  request.set_use_resolution_binning(false);
  request.set_output_format(v1::OUTPUT_FORMAT_LATENT_F32);
  request.set_partial_images(1);
  StreamedGeneration reference;
  {
    std::unique_ptr<ServingCluster> single = StartCluster(model_dir, 1, {});
    ASSERT_NE(single, nullptr);
    reference = Stream(*single, request);
  }
  std::unique_ptr<ServingCluster> split =
      StartCluster(model_dir, 2, {"--cfg_degree=2"});
  ASSERT_NE(split, nullptr);
  ExpectSamePreviews(reference, Stream(*split, request), "cfg2");
}

// On one rank: three previews of each of two outputs after steps 1, 2 and 3
// of 4, each after its step's progress and before the result, PNGs of the
// output's size that change from step to step; and the images are those of
// the same request without previews.
TEST(PartialImageStreamTest, PreviewsComeInStepOrderBeforeTheUnchangedResult) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 1});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::GenerateRequest request = SmallRequest("a lighthouse at dusk");
  request.add_prompt("a fox in the snow");
  request.set_num_inference_steps(4);
  absl::StatusOr<v1::GenerateResponse> plain =
      (*cluster)->Generate(request, kCallSeconds);
  ASSERT_TRUE(plain.ok()) << plain.status();

  absl::StatusOr<std::string> before = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(before.ok()) << before.status();

  request.set_partial_images(3);
  const StreamedGeneration streamed = Stream(**cluster, request);
  EXPECT_THAT(streamed.result.config().partial_image_steps(),
              ElementsAre(1, 2, 3));
  // The result goes out once the previews' thread has sent and counted
  // them: one count per step, however many outputs the run has.
  absl::StatusOr<std::string> after = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(after.ok()) << after.status();
  const auto increase = [&](const std::string& metric,
                            const std::vector<std::string>& labels) {
    return Increase(*before, *after, metric, labels);
  };
  EXPECT_EQ(increase("ditserve_partial_images_total", {"result=\"sent\""}), 3);
  EXPECT_EQ(increase("ditserve_partial_images_total", {}), 3);
  EXPECT_EQ(increase("ditserve_partial_image_delay_seconds_count", {}), 3);
  ASSERT_EQ(streamed.result.images_size(), 2);
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(streamed.result.images(i).data() == plain->images(i).data())
        << "output " << i;
  }
  ASSERT_EQ(streamed.partial_images.size(), 6U);
  // The n-th preview comes after the n-th step's progress; all before the
  // result.
  int progress_seen = 0;
  size_t preview = 0;
  for (const std::string& event : streamed.events) {
    if (event == "progress") ++progress_seen;
    if (event != "partial_image") continue;
    ASSERT_LT(preview, streamed.partial_images.size());
    EXPECT_GE(progress_seen, streamed.partial_images[preview].step());
    ++preview;
  }
  EXPECT_EQ(streamed.events.back(), "result");
  std::vector<std::string> seen;
  for (const auto* partial : InOrder(streamed)) {
    EXPECT_EQ(partial->step(), partial->partial_image_index() + 1);
    const v1::Image& image = partial->image();
    EXPECT_EQ(image.mime_type(), "image/png");
    EXPECT_EQ(image.width(), request.width());
    EXPECT_EQ(image.height(), request.height());
    absl::StatusOr<at::Tensor> pixels = io::DecodePng(image.data());
    ASSERT_TRUE(pixels.ok()) << pixels.status();
    EXPECT_EQ(pixels->size(0), request.height());
    EXPECT_EQ(pixels->size(1), request.width());
    EXPECT_TRUE(image.data() !=
                streamed.result.images(image.prompt_index()).data())
        << "preview " << partial->partial_image_index() << " of output "
        << image.prompt_index() << " is the result";
    EXPECT_EQ(std::count(seen.begin(), seen.end(), image.data()), 0)
        << "preview " << partial->partial_image_index() << " of output "
        << image.prompt_index() << " repeats another";
    seen.push_back(image.data());
  }
}

// FLUX.1's first step is at σ = 1 however many steps follow, and a
// one-step run lands on that step's clean estimate (σ goes to 0): so the
// preview after step 1 of 2 is the image of the same request in one step,
// byte for byte. A preview of the step's noisy latents would not be.
TEST(PartialImageStreamTest, APreviewIsItsStepsCleanImageEstimate) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 1});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::GenerateRequest request = SmallRequest("a lighthouse at dusk");
  request.set_partial_images(1);
  const StreamedGeneration streamed = Stream(**cluster, request);
  ASSERT_EQ(streamed.partial_images.size(), 1U);
  EXPECT_EQ(streamed.partial_images[0].step(), 1);

  request.set_partial_images(0);
  request.set_num_inference_steps(1);
  absl::StatusOr<v1::GenerateResponse> one_step =
      (*cluster)->Generate(request, kCallSeconds);
  ASSERT_TRUE(one_step.ok()) << one_step.status();
  EXPECT_TRUE(streamed.partial_images[0].image().data() ==
              one_step->images(0).data())
      << "the preview after step 1 differs from the one-step image";
}

// Requests that want different previews still share a run, which takes the
// union of their preview steps: each gets its own previews and images, those
// it gets alone, and one decode per step serves every request that wants it.
// Not byte for byte: three images in one forward on one rank round
// differently from one (measured: up to 6.6e-7 on latents up to 4).
TEST(PartialImageBatchTest, RequestsWantingDifferentPreviewsShareARun) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 1, .host_flags = {"--max_queue=8", "--max_batch=4"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const auto previewed = [](const std::string& prompt, uint64_t seed,
                            int partial_images) {
    v1::GenerateRequest request = SmallRequest(prompt);
    request.set_seed(seed);
    request.set_num_inference_steps(4);
    request.set_partial_images(partial_images);
    request.set_output_format(v1::OUTPUT_FORMAT_LATENT_F32);
    return request;
  };
  // Previews after step 2; none; after steps 1, 2 and 3.
  const std::vector<v1::GenerateRequest> requests = {
      previewed("a red barn", 11, 1), previewed("a blue door", 22, 0),
      previewed("a tall tower", 33, 3)};
  std::vector<StreamedGeneration> alone;
  for (const v1::GenerateRequest& request : requests) {
    alone.push_back(Stream(**cluster, request));
  }
  absl::StatusOr<std::string> before = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(before.ok()) << before.status();

  RunningStream blocker =
      StartAndWaitForFirstStep(**cluster, LongRequest(), kCallSeconds);
  std::vector<StreamedGeneration> together(requests.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < requests.size(); ++i) {
    clients.emplace_back(
        [&, i] { together[i] = Stream(**cluster, requests[i]); });
  }
  EXPECT_TRUE(WaitForQueueDepth(**cluster, static_cast<int>(requests.size()),
                                std::chrono::seconds(30)));
  blocker.CancelAndDrain();
  for (std::thread& client : clients) client.join();

  absl::StatusOr<std::string> after = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(after.ok()) << after.status();
  const auto increase = [&](const std::string& metric,
                            const std::vector<std::string>& labels) {
    return Increase(*before, *after, metric, labels);
  };
  // The cancelled blocker, then the three together.
  EXPECT_EQ(increase("ditserve_run_batch_requests_count", {}), 2);
  EXPECT_EQ(increase("ditserve_run_batch_requests_sum", {}), 4);
  EXPECT_EQ(increase("ditserve_partial_images_total", {"result=\"sent\""}), 3)
      << "steps 1, 2 and 3, step 2 for two requests";

  EXPECT_TRUE(together[1].partial_images.empty());
  for (size_t i = 0; i < requests.size(); ++i) {
    const std::string request = absl::StrCat("request ", i);
    EXPECT_THAT(together[i].result.config().partial_image_steps(),
                ::testing::ElementsAreArray(
                    alone[i].result.config().partial_image_steps()))
        << request;
    ASSERT_EQ(together[i].result.images_size(), 1) << request;
    ExpectSameLatents(alone[i].result.images(0), together[i].result.images(0),
                      request);
    if (!alone[i].partial_images.empty()) {
      ExpectSamePreviews(alone[i], together[i], request);
    }
  }
}

// ditctl --partial_images writes each preview beside the image as it
// arrives: the bytes gRPC streams for the same request.
TEST(PartialImageStreamTest, DitctlSavesEachPreviewBesideTheImage) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 1});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::GenerateRequest request = SmallRequest("a lighthouse at dusk");
  request.set_num_inference_steps(3);
  request.set_partial_images(2);
  const StreamedGeneration streamed = Stream(**cluster, request);
  ASSERT_EQ(streamed.partial_images.size(), 2U);

  char dir[] = "/tmp/ditserve-previews-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const local_cluster::ShellResult ditctl = local_cluster::RunShell(
      absl::StrCat(DITSERVE_BIN_DIR, "/ditctl --server=", (*cluster)->address(),
                   " generate 'a lighthouse at dusk' -W ", request.width(),
                   " -H ", request.height(), " --seed ", request.seed(),
                   " --max_sequence_length ", request.max_sequence_length(),
                   " --steps 3 --partial_images 2 -o ", dir, "/out.png 2>&1"));
  ASSERT_EQ(ditctl.exit_code, 0) << ditctl.output;
  EXPECT_THAT(ditctl.output,
              ::testing::HasSubstr(absl::StrCat("preview after step 2: ", dir,
                                                "/out-step2.png")));
  for (const auto& preview : streamed.partial_images) {
    const std::string path =
        absl::StrCat(dir, "/out-step", preview.step(), ".png");
    std::ifstream file(path, std::ios::binary);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(file), {}),
              preview.image().data())
        << path;
  }
  std::ifstream image(absl::StrCat(dir, "/out.png"), std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(image), {}),
            streamed.result.images(0).data());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ditserve::testing
