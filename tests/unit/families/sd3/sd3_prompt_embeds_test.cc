#include "core/families/sd3/sd3_prompt_embeds.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

namespace ditserve::families {
namespace {

using ::testing::HasSubstr;

SD3TextEncoderStates States() {
  torch::manual_seed(0);
  SD3TextEncoderStates states;
  states.clip_l_hidden = torch::randn({2, 77, 8});
  states.clip_g_hidden = torch::randn({2, 77, 12});
  states.clip_l_pooled = torch::randn({2, 8});
  states.clip_g_pooled = torch::randn({2, 12});
  states.t5_hidden = torch::randn({2, 16, 32});
  return states;
}

TEST(SD3PromptEmbedsTest, ClipChannelsArePaddedAndT5Follows) {
  const SD3TextEncoderStates states = States();
  absl::StatusOr<SD3PromptEmbeds> embeds =
      AssembleSD3PromptEmbeds(states, /*joint_attention_dim=*/32, 16);
  ASSERT_TRUE(embeds.ok()) << embeds.status();
  const at::Tensor& sequence = embeds->prompt_embeds;
  EXPECT_EQ(sequence.sizes(), (std::vector<int64_t>{2, 93, 32}));
  const at::Tensor clip = sequence.slice(1, 0, 77);
  EXPECT_TRUE(clip.slice(2, 0, 8).equal(states.clip_l_hidden));
  EXPECT_TRUE(clip.slice(2, 8, 20).equal(states.clip_g_hidden));
  EXPECT_TRUE(clip.slice(2, 20).eq(0).all().item<bool>());
  EXPECT_TRUE(sequence.slice(1, 77).equal(*states.t5_hidden));
  EXPECT_TRUE(embeds->pooled_prompt_embeds.equal(
      torch::cat({states.clip_l_pooled, states.clip_g_pooled}, 1)));
}

TEST(SD3PromptEmbedsTest, WithoutT5TheTextTokensAreZeros) {
  SD3TextEncoderStates states = States();
  states.t5_hidden.reset();
  absl::StatusOr<SD3PromptEmbeds> embeds =
      AssembleSD3PromptEmbeds(states, /*joint_attention_dim=*/32, 10);
  ASSERT_TRUE(embeds.ok()) << embeds.status();
  EXPECT_EQ(embeds->prompt_embeds.sizes(), (std::vector<int64_t>{2, 87, 32}));
  EXPECT_TRUE(embeds->prompt_embeds.slice(1, 77).eq(0).all().item<bool>());
}

TEST(SD3PromptEmbedsTest, ClipWiderThanTheJointWidthIsAnError) {
  SD3TextEncoderStates states = States();
  states.t5_hidden = torch::zeros({2, 16, 16});
  absl::StatusOr<SD3PromptEmbeds> embeds =
      AssembleSD3PromptEmbeds(states, /*joint_attention_dim=*/16, 16);
  EXPECT_EQ(embeds.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(embeds.status().message(),
              HasSubstr("CLIP-L and CLIP-G widths 8 + 12 exceed "
                        "joint_attention_dim 16"));
}

TEST(SD3PromptEmbedsTest, MismatchedBatchNamesTheInput) {
  SD3TextEncoderStates states = States();
  states.clip_g_pooled = torch::zeros({3, 12});
  absl::StatusOr<SD3PromptEmbeds> embeds =
      AssembleSD3PromptEmbeds(states, /*joint_attention_dim=*/32, 16);
  EXPECT_EQ(embeds.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(embeds.status().message(),
              HasSubstr("clip_g_pooled has shape [3, 12]; expected [2, *]"));
}

}  // namespace
}  // namespace ditserve::families
