#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/engine/denoise_loop.h"
#include "core/families/pixart/pixart_family.h"
#include "core/models/text/t5_prompt_encoder.h"
#include "core/parallel/local_attention.h"

namespace ditserve::families {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;

// A PixArt checkpoint folder assembled from golden components: the tiny T5
// tokenizer and encoder (d_model 32 = the transformer's caption_channels) and
// the pixart_sigma pipeline's transformer, VAE and scheduler.
class PixArtPromptEncoderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path golden = fs::path(DITSERVE_TEST_DATA_DIR) / "golden";
    dir_ = fs::temp_directory_path() /
           ("pixart_prompt_encoder_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    fs::create_directory_symlink(golden / "tokenizers/t5_sp",
                                 dir_ / "tokenizer");
    fs::create_directory_symlink(golden / "models/t5_encoder",
                                 dir_ / "text_encoder");
    for (const char* component : {"transformer", "vae", "scheduler"}) {
      fs::create_directory_symlink(
          golden / "pipelines/pixart_sigma" / component, dir_ / component);
    }
    absl::StatusOr<std::unique_ptr<models::T5PromptEncoder>> encoder =
        models::T5PromptEncoder::Load(dir_.string(), models::Placement{});
    ASSERT_TRUE(encoder.ok()) << encoder.status();
    encoder_ = *std::move(encoder);
  }

  void TearDown() override { fs::remove_all(dir_); }

  // The whole family model over the test's folder.
  std::unique_ptr<families::FamilyModel> LoadModel() const {
    families::LoadOptions options;
    options.attention = std::make_shared<parallel::LocalAttention>();
    absl::StatusOr<std::unique_ptr<families::FamilyModel>> model =
        families::PixArtFamily().Load(dir_.string(), options);
    EXPECT_TRUE(model.ok()) << model.status();
    return model.ok() ? *std::move(model) : nullptr;
  }

  fs::path dir_;
  std::unique_ptr<models::T5PromptEncoder> encoder_;
};

TEST_F(PixArtPromptEncoderTest, MaskMarksTheTokensAndEndOfSequence) {
  absl::StatusOr<models::T5PromptStates> embeds =
      encoder_->Encode({"a red fox", ""}, 12, models::T5Padding::kMasked);
  ASSERT_TRUE(embeds.ok()) << embeds.status();
  EXPECT_EQ(embeds->states.sizes(), (std::vector<int64_t>{2, 12, 32}));
  const at::Tensor tokens = embeds->mask.sum(1);
  EXPECT_GT(tokens[0].item<int64_t>(), 1);
  // The empty negative prompt is `</s>` alone.
  EXPECT_EQ(tokens[1].item<int64_t>(), 1);
}

TEST_F(PixArtPromptEncoderTest, MaskedTokenStatesDoNotDependOnThePadding) {
  absl::StatusOr<models::T5PromptStates> short_pad =
      encoder_->Encode({"a red fox"}, 12, models::T5Padding::kMasked);
  absl::StatusOr<models::T5PromptStates> long_pad =
      encoder_->Encode({"a red fox"}, 24, models::T5Padding::kMasked);
  ASSERT_TRUE(short_pad.ok()) << short_pad.status();
  ASSERT_TRUE(long_pad.ok()) << long_pad.status();
  const int64_t tokens = short_pad->mask.sum().item<int64_t>();
  EXPECT_TRUE(torch::allclose(short_pad->states.slice(1, 0, tokens),
                              long_pad->states.slice(1, 0, tokens), 1e-5,
                              1e-6));
}

// CogVideoX's pipeline passes no mask: its token states see the padding, so
// they change with the padded length (and differ from the masked ones).
TEST_F(PixArtPromptEncoderTest, AttendedTokenStatesSeeThePadding) {
  absl::StatusOr<models::T5PromptStates> masked =
      encoder_->Encode({"a red fox"}, 12, models::T5Padding::kMasked);
  absl::StatusOr<models::T5PromptStates> short_pad =
      encoder_->Encode({"a red fox"}, 12, models::T5Padding::kAttended);
  absl::StatusOr<models::T5PromptStates> long_pad =
      encoder_->Encode({"a red fox"}, 24, models::T5Padding::kAttended);
  ASSERT_TRUE(masked.ok() && short_pad.ok() && long_pad.ok());
  EXPECT_TRUE(torch::equal(short_pad->mask, masked->mask));
  const int64_t tokens = masked->mask.sum().item<int64_t>();
  const at::Tensor attended = short_pad->states.slice(1, 0, tokens);
  EXPECT_FALSE(torch::allclose(attended, masked->states.slice(1, 0, tokens),
                               1e-4, 1e-5));
  EXPECT_FALSE(torch::allclose(attended, long_pad->states.slice(1, 0, tokens),
                               1e-4, 1e-5));
}

TEST_F(PixArtPromptEncoderTest, NoPromptsIsAnError) {
  absl::StatusOr<models::T5PromptStates> embeds =
      encoder_->Encode({}, 12, models::T5Padding::kMasked);
  EXPECT_EQ(embeds.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(embeds.status().message(), HasSubstr("prompts is empty"));
}

// As PixArt's pipelines preprocess a prompt: T5's vocabulary has "A" and
// "a" apart, and the capitalised prompt gets the lower-case one's states.
TEST_F(PixArtPromptEncoderTest, PromptsAreLowerCasedAndStrippedFirst) {
  const std::unique_ptr<families::FamilyModel> model = LoadModel();
  ASSERT_NE(model, nullptr);
  absl::StatusOr<families::Conditioning> written =
      model->EncodePrompts({" A Red FOX\n"}, 12);
  absl::StatusOr<models::T5PromptStates> lower =
      encoder_->Encode({"a red fox"}, 12, models::T5Padding::kMasked);
  absl::StatusOr<models::T5PromptStates> as_written =
      encoder_->Encode({" A Red FOX\n"}, 12, models::T5Padding::kMasked);
  ASSERT_TRUE(written.ok() && lower.ok() && as_written.ok());
  EXPECT_TRUE(torch::equal(written->states, lower->states));
  EXPECT_FALSE(torch::equal(as_written->states, lower->states));
}

TEST_F(PixArtPromptEncoderTest, PromptStringsGenerateAnImage) {
  const std::unique_ptr<families::FamilyModel> model = LoadModel();
  ASSERT_NE(model, nullptr);
  absl::StatusOr<families::Conditioning> positive =
      model->EncodePrompts({"a red fox"}, 12);
  absl::StatusOr<families::Conditioning> negative =
      model->EncodePrompts({""}, 12);
  ASSERT_TRUE(positive.ok()) << positive.status();
  ASSERT_TRUE(negative.ok()) << negative.status();
  families::GenerationRequest request;
  request.prompt = *positive;
  request.negative_prompt = *negative;
  request.height = 32;
  request.width = 32;
  request.num_inference_steps = 2;
  request.guidance_scale = 4.5F;
  request.seeds = {7};
  absl::StatusOr<families::DecodeOutput> image =
      engine::Generate(*model, request, nullptr);
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->images.rgb.sizes(), (std::vector<int64_t>{1, 32, 32, 3}));
  EXPECT_TRUE(torch::isfinite(image->images.raw).all().item<bool>());
}

}  // namespace
}  // namespace ditserve::families
