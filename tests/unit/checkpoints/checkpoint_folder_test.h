#ifndef DITSERVE_TESTS_UNIT_CHECKPOINTS_CHECKPOINT_FOLDER_TEST_H_
#define DITSERVE_TESTS_UNIT_CHECKPOINTS_CHECKPOINT_FOLDER_TEST_H_

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "core/engine/denoise_loop.h"
#include "core/engine/family_registry.h"
#include "core/engine/write_checkpoint.h"
#include "core/families/flux/flux_defaults.h"
#include "core/families/pixart/pixart_defaults.h"
#include "core/families/sd3/sd3_defaults.h"
#include "core/parallel/local_attention.h"

namespace ditserve::checkpoints {

// A fresh folder per test, removed afterwards, to write checkpoints into.
class CheckpointFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Suite and test name: ctest runs tests of equal names in different
    // suites at the same time.
    const ::testing::TestInfo* test =
        ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = std::filesystem::path(::testing::TempDir()) /
            (std::string("checkpoint_test_") + test->test_suite_name() + "_" +
             test->name());
    std::filesystem::remove_all(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  // A tiny checkpoint of `model` in root_/`name`.
  std::string WriteTiny(const config::ModelDefaults& model, uint64_t seed,
                        const std::string& name) {
    const std::string dir = (root_ / name).string();
    const absl::Status status =
        engine::WriteCheckpoint(model.name, CheckpointPreset::kTiny, seed, dir);
    EXPECT_TRUE(status.ok()) << status;
    return dir;
  }

  // The checkpoint in `dir` of `model`, loaded through the registry,
  // generates one 64x48 image of "a fox in the snow" (with the empty negative
  // prompt where the family guides by classifier-free guidance) in two steps.
  static void ExpectGeneratesFromPrompts(const config::ModelDefaults& model,
                                         const std::string& dir,
                                         float guidance_scale) {
    absl::StatusOr<const families::Family*> registered =
        engine::FamilyFor(model.name);
    ASSERT_TRUE(registered.ok()) << registered.status();
    families::LoadOptions options;
    options.attention = std::make_shared<parallel::LocalAttention>();
    absl::StatusOr<std::unique_ptr<families::FamilyModel>> model =
        (*registered)->Load(dir, options);
    ASSERT_TRUE(model.ok()) << model.status();
    families::GenerationRequest request;
    absl::StatusOr<families::Conditioning> prompt =
        (*model)->EncodePrompts({"a fox in the snow"}, 16);
    ASSERT_TRUE(prompt.ok()) << prompt.status();
    request.prompt = *prompt;
    if ((*model)->guidance_rule() == families::GuidanceRule::kClassifierFree) {
      absl::StatusOr<families::Conditioning> negative =
          (*model)->EncodePrompts({""}, 16);
      ASSERT_TRUE(negative.ok()) << negative.status();
      request.negative_prompt = *negative;
    }
    request.height = 64;
    request.width = 48;
    request.num_inference_steps = 2;
    request.guidance_scale = guidance_scale;
    request.seeds = {3};
    absl::StatusOr<families::DecodeOutput> out =
        engine::Generate(**model, request, nullptr);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->images.rgb.sizes(), (at::IntArrayRef{1, 64, 48, 3}));
    EXPECT_TRUE(out->images.image.isfinite().all().item<bool>());
  }

  static std::string Bytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }

  std::filesystem::path root_;
};

}  // namespace ditserve::checkpoints

#endif  // DITSERVE_TESTS_UNIT_CHECKPOINTS_CHECKPOINT_FOLDER_TEST_H_
