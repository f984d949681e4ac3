#include "core/families/sd3/sd3_prompt_encoder.h"

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/families/sd3/sd3_checkpoint.h"
#include "core/tokenizers/clip_tokenizer.h"
#include "core/tokenizers/t5_tokenizer.h"

namespace ditserve::families {
namespace {

constexpr int kMaxSequenceLength = 12;
constexpr int64_t kJointAttentionDim = 64;  // the tiny preset's T5 width

// [1, length] ids of `text` padded by `tokenizer`.
template <typename Tokenizer>
at::Tensor Ids(const Tokenizer& tokenizer, const std::string& text,
               int length) {
  absl::StatusOr<tokenizers::TokenizedText> tokens =
      tokenizer.EncodePadded(text, length);
  EXPECT_TRUE(tokens.ok()) << tokens.status();
  return torch::tensor(tokens->input_ids, torch::kLong).view({1, length});
}

class SD3PromptEncoderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(
        (std::filesystem::path(::testing::TempDir()) /
         ("sd3_prompt_encoder_test_" + std::to_string(::getpid())))
            .string());
    const absl::Status status = checkpoints::WriteSD3Checkpoint(
        checkpoints::CheckpointPreset::kTiny, /*seed=*/0, *dir_);
    ASSERT_TRUE(status.ok()) << status;
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }

  static std::string* dir_;
};
std::string* SD3PromptEncoderTest::dir_ = nullptr;

// The sequence is CLIP-L's and CLIP-G's penultimate states side by side
// (zero-padded to the joint width), then T5's last states; pooled is both
// projections.
TEST_F(SD3PromptEncoderTest, EmbedsArePenultimateClipStatesThenT5) {
  const std::string prompt = "a fox in the snow";
  absl::StatusOr<std::unique_ptr<SD3PromptEncoder>> encoder =
      SD3PromptEncoder::Load(*dir_, kJointAttentionDim, {});
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  absl::StatusOr<SD3PromptEmbeds> embeds =
      (*encoder)->Encode({prompt}, kMaxSequenceLength);
  ASSERT_TRUE(embeds.ok()) << embeds.status();

  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> clip_states;
  std::vector<at::Tensor> pooled;
  for (const auto& [tokenizer_dir, encoder_dir] :
       {std::pair{"/tokenizer", "/text_encoder"},
        std::pair{"/tokenizer_2", "/text_encoder_2"}}) {
    absl::StatusOr<tokenizers::CLIPTokenizer> tokenizer =
        tokenizers::CLIPTokenizer::Load(*dir_ + tokenizer_dir);
    absl::StatusOr<std::shared_ptr<models::CLIPTextModelWithProjection>> clip =
        models::LoadCLIPTextModelWithProjection(*dir_ + encoder_dir, {});
    ASSERT_TRUE(tokenizer.ok() && clip.ok());
    absl::StatusOr<models::CLIPTextOutput> out =
        (*clip)->Forward(Ids(*tokenizer, prompt, 77));
    ASSERT_TRUE(out.ok()) << out.status();
    clip_states.push_back(out->hidden_states[out->hidden_states.size() - 2]);
    pooled.push_back(out->text_embeds);
  }
  absl::StatusOr<tokenizers::T5Tokenizer> t5_tokenizer =
      tokenizers::T5Tokenizer::Load(*dir_ + "/tokenizer_3");
  absl::StatusOr<std::shared_ptr<models::T5EncoderModel>> t5 =
      models::LoadT5EncoderModel(*dir_ + "/text_encoder_3", {});
  ASSERT_TRUE(t5_tokenizer.ok() && t5.ok());
  absl::StatusOr<at::Tensor> t5_states =
      (*t5)->Forward(Ids(*t5_tokenizer, prompt, kMaxSequenceLength));
  ASSERT_TRUE(t5_states.ok()) << t5_states.status();

  const at::Tensor& sequence = embeds->prompt_embeds;
  ASSERT_EQ(sequence.sizes(),
            (at::IntArrayRef{1, 77 + kMaxSequenceLength, kJointAttentionDim}));
  const int64_t clip_l_width = clip_states[0].size(2);
  const int64_t clip_width = clip_l_width + clip_states[1].size(2);
  const at::Tensor clip_part = sequence.slice(1, 0, 77);
  EXPECT_TRUE(
      torch::equal(clip_part.slice(2, 0, clip_l_width), clip_states[0]));
  EXPECT_TRUE(torch::equal(clip_part.slice(2, clip_l_width, clip_width),
                           clip_states[1]));
  EXPECT_TRUE(clip_part.slice(2, clip_width).eq(0).all().item<bool>());
  EXPECT_TRUE(torch::equal(sequence.slice(1, 77), *t5_states));
  EXPECT_TRUE(
      torch::equal(embeds->pooled_prompt_embeds, torch::cat(pooled, 1)));
}

TEST_F(SD3PromptEncoderTest, PromptsOfABatchGetTheirOwnRows) {
  absl::StatusOr<std::unique_ptr<SD3PromptEncoder>> encoder =
      SD3PromptEncoder::Load(*dir_, kJointAttentionDim, {});
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  absl::StatusOr<SD3PromptEmbeds> both =
      (*encoder)->Encode({"a fox in the snow", ""}, kMaxSequenceLength);
  absl::StatusOr<SD3PromptEmbeds> empty =
      (*encoder)->Encode({""}, kMaxSequenceLength);
  ASSERT_TRUE(both.ok() && empty.ok());
  EXPECT_TRUE(at::allclose(both->prompt_embeds[1], empty->prompt_embeds[0],
                           /*rtol=*/1e-5, /*atol=*/1e-6));
  EXPECT_FALSE(at::allclose(both->prompt_embeds[0], both->prompt_embeds[1]));
}

TEST_F(SD3PromptEncoderTest, MissingT5IsNamed) {
  std::filesystem::rename(*dir_ + "/text_encoder_3",
                          *dir_ + "/text_encoder_3.moved");
  absl::StatusOr<std::unique_ptr<SD3PromptEncoder>> encoder =
      SD3PromptEncoder::Load(*dir_, kJointAttentionDim, {});
  std::filesystem::rename(*dir_ + "/text_encoder_3.moved",
                          *dir_ + "/text_encoder_3");
  ASSERT_FALSE(encoder.ok());
  EXPECT_NE(std::string(encoder.status().message()).find("text_encoder_3"),
            std::string::npos)
      << encoder.status();
}

}  // namespace
}  // namespace ditserve::families
