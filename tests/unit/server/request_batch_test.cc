#include "server/request_batch.h"

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/config/freeze.h"
#include "core/config/parallel_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/reference_specs.h"

namespace ditserve::server {
namespace {

using ::ditserve::testing::FullSizeSpec;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const config::ModelSpec& Spec() {
  static const config::ModelSpec spec =
      FullSizeSpec(families::kFluxDevDefaults);
  return spec;
}

// Frozen on two data-parallel groups, so the image count moves the shapes.
v1::InputConfig Frozen(const std::vector<std::string>& prompts, uint64_t seed,
                       const std::string& request_id,
                       int64_t deadline_micros = 0,
                       int num_inference_steps = 4) {
  v1::GenerateRequest request;
  for (const std::string& prompt : prompts) request.add_prompt(prompt);
  request.set_seed(seed);
  request.set_request_id(request_id);
  request.set_num_inference_steps(num_inference_steps);
  absl::StatusOr<v1::ParallelConfig> parallel =
      config::MakeParallelConfig({.dp_degree = 2}, 2);
  EXPECT_TRUE(parallel.ok()) << parallel.status();
  absl::StatusOr<v1::InputConfig> config = config::Freeze(
      request, Spec(), config::ServerOptions{}, *parallel,
      {.sequence_number = seed, .deadline_unix_micros = deadline_micros});
  EXPECT_TRUE(config.ok()) << config.status();
  return *config;
}

TEST(RequestBatchTest, RequestsDifferingInPromptsSeedsIdsAndDeadlinesShare) {
  EXPECT_TRUE(CanShareRun(Frozen({"a fox"}, 1, "a"),
                          Frozen({"a boat", "a bridge"}, 9, "b", 5000)));
}

// Each request keeps its own previews (scheduler.h), so how many it wants
// does not keep it out of a run.
TEST(RequestBatchTest, RequestsWantingDifferentPreviewsShareTheUnionOfSteps) {
  v1::InputConfig none = Frozen({"a fox"}, 1, "a", 0, 28);
  v1::InputConfig three = Frozen({"a boat"}, 2, "b", 0, 28);
  for (const int step : {7, 14, 21}) three.add_partial_image_steps(step);
  v1::InputConfig two = Frozen({"a bridge"}, 3, "c", 0, 28);
  for (const int step : {9, 18}) two.add_partial_image_steps(step);
  EXPECT_TRUE(CanShareRun(none, three));
  EXPECT_TRUE(CanShareRun(three, two));
  absl::StatusOr<v1::InputConfig> merged =
      MergeConfigs({&none, &three, &two}, Spec());
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_THAT(merged->partial_image_steps(), ElementsAre(7, 9, 14, 18, 21));
  v1::InputConfig again = two;
  again.mutable_partial_image_steps()->Add(21);
  merged = MergeConfigs({&three, &again}, Spec());
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_THAT(merged->partial_image_steps(), ElementsAre(7, 9, 14, 18, 21))
      << "a step two requests want is one preview";
  merged = MergeConfigs({&none}, Spec());
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_THAT(merged->partial_image_steps(), ElementsAre());
}

TEST(RequestBatchTest, AnyOtherDifferenceKeepsRequestsApart) {
  const v1::InputConfig first = Frozen({"a fox"}, 1, "a");
  EXPECT_FALSE(CanShareRun(first, Frozen({"a fox"}, 1, "b", 0, 8)));
  v1::InputConfig taller = first;
  taller.set_height(first.height() + 16);
  EXPECT_FALSE(CanShareRun(first, taller));
  v1::InputConfig latents = first;
  latents.set_output_format(v1::OUTPUT_FORMAT_LATENT_F32);
  EXPECT_FALSE(CanShareRun(first, latents));
  v1::InputConfig guided = first;
  guided.set_guidance_scale(first.guidance_scale() + 1);
  EXPECT_FALSE(CanShareRun(first, guided));
  // A lower priority must not ride along and slow a higher one.
  v1::InputConfig urgent = first;
  urgent.set_priority(first.priority() + 1);
  EXPECT_FALSE(CanShareRun(first, urgent));
}

TEST(RequestBatchTest, MergedConfigEqualsOneRequestOfAllThePrompts) {
  const v1::InputConfig a = Frozen({"a fox"}, 1, "a");
  const v1::InputConfig b = Frozen({"a boat", "a bridge"}, 9, "b");
  absl::StatusOr<v1::InputConfig> merged = MergeConfigs({&a, &b}, Spec());
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_THAT(merged->prompt(), ElementsAre("a fox", "a boat", "a bridge"));
  EXPECT_THAT(merged->seeds(), ElementsAre(1, 9, 10));
  EXPECT_EQ(merged->request_id(), "a+b");
  EXPECT_EQ(merged->sequence_number(), a.sequence_number());
  // The shapes of one request of the three prompts: dp groups of 2 and 1.
  const v1::InputConfig together =
      Frozen({"a fox", "a boat", "a bridge"}, 1, "a");
  EXPECT_EQ(merged->shapes().SerializeAsString(),
            together.shapes().SerializeAsString());
  EXPECT_THAT(merged->shapes().dp_group_prompt_offsets(), ElementsAre(0, 2, 3));
}

TEST(RequestBatchTest, MergedDeadlineIsTheLatestOrNoneWhenOneHasNone) {
  const v1::InputConfig early = Frozen({"a"}, 1, "a", 1000);
  const v1::InputConfig late = Frozen({"b"}, 2, "b", 3000);
  const v1::InputConfig open = Frozen({"c"}, 3, "c");
  EXPECT_EQ(MergeConfigs({&early, &late}, Spec())->deadline_unix_micros(),
            3000);
  EXPECT_EQ(
      MergeConfigs({&early, &open, &late}, Spec())->deadline_unix_micros(), 0);
}

TEST(RequestBatchTest, MergingRequestsThatCannotShareNamesThem) {
  const v1::InputConfig a = Frozen({"a fox"}, 1, "a");
  const v1::InputConfig b = Frozen({"a fox"}, 1, "b", 0, 8);
  absl::StatusOr<v1::InputConfig> merged = MergeConfigs({&a, &b}, Spec());
  EXPECT_EQ(merged.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(merged.status().message(), HasSubstr("request b"));
  EXPECT_THAT(merged.status().message(), HasSubstr("request a"));
}

TEST(RequestBatchTest, SplitGivesEachRequestItsImagesAndEveryTiming) {
  v1::GenerateResponse merged;
  int prompt = 0;
  for (const char* data : {"first", "second", "third"}) {
    v1::Image* image = merged.add_images();
    image->set_data(data);
    image->set_prompt_index(prompt++);
  }
  merged.add_timings()->set_stage("denoise");
  absl::StatusOr<std::vector<v1::GenerateResponse>> split =
      SplitResponse(merged, {1, 2});
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_EQ(split->size(), 2);
  ASSERT_EQ((*split)[0].images_size(), 1);
  EXPECT_EQ((*split)[0].images(0).data(), "first");
  ASSERT_EQ((*split)[1].images_size(), 2);
  EXPECT_EQ((*split)[1].images(0).data(), "second");
  EXPECT_EQ((*split)[1].images(1).data(), "third");
  EXPECT_EQ((*split)[1].images(1).prompt_index(), 1);
  for (const v1::GenerateResponse& response : *split) {
    ASSERT_EQ(response.timings_size(), 1);
    EXPECT_EQ(response.timings(0).stage(), "denoise");
  }
  EXPECT_EQ(SplitResponse(merged, {1, 1}).status().code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(SplitResponse(merged, {2, 2}).status().code(),
            absl::StatusCode::kInternal);
}

TEST(RequestBatchTest, SplitKeepsEveryFrameOfAPromptTogether) {
  v1::GenerateResponse merged;
  for (const int prompt : {0, 0, 0, 1, 1, 1}) {
    v1::Image* frame = merged.add_images();
    frame->set_prompt_index(prompt);
    frame->set_frame_index(merged.images_size() % 3);
  }
  absl::StatusOr<std::vector<v1::GenerateResponse>> split =
      SplitResponse(merged, {1, 1});
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_EQ((*split)[0].images_size(), 3);
  ASSERT_EQ((*split)[1].images_size(), 3);
  EXPECT_EQ((*split)[1].images(2).prompt_index(), 0);
  // Out of prompt order is a bug of the run, not something to reorder.
  merged.mutable_images(1)->set_prompt_index(1);
  EXPECT_EQ(SplitResponse(merged, {1, 1}).status().code(),
            absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace ditserve::server
