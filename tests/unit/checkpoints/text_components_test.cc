#include "core/checkpoints/text_components.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/base/json.h"
#include "core/families/flux/flux_checkpoint.h"
#include "core/families/flux/flux_prompt_encoder.h"
#include "core/tokenizers/clip_tokenizer.h"
#include "core/tokenizers/t5_tokenizer.h"
#include "nlohmann/json.hpp"
#include "tests/unit/checkpoints/checkpoint_folder_test.h"

namespace ditserve::checkpoints {
namespace {

using ::testing::Each;
using ::testing::HasSubstr;
using ::testing::Lt;
using ::testing::Ne;

constexpr char kSentence[] = "A golden fox sleeps under the old bridge.";

class TextComponentsTest : public CheckpointFolderTest {
 protected:
  // A whole tiny FLUX.1-dev checkpoint: the text components come with it.
  std::string WriteTiny(uint64_t seed, const std::string& name) {
    return CheckpointFolderTest::WriteTiny(families::kFluxDevDefaults, seed,
                                           name);
  }

  // Every file under the text folders, relative to `dir`.
  static std::vector<std::string> TextFiles(const std::string& dir) {
    std::vector<std::string> files;
    for (const char* folder :
         {"tokenizer", "tokenizer_2", "text_encoder", "text_encoder_2"}) {
      for (const auto& entry : std::filesystem::directory_iterator(
               std::filesystem::path(dir) / folder)) {
        files.push_back(std::filesystem::relative(entry.path(), dir).string());
      }
    }
    std::sort(files.begin(), files.end());
    return files;
  }
};

TEST_F(TextComponentsTest, FluxPromptEncoderLoadsAndTellsPromptsApart) {
  const std::string dir = WriteTiny(0, "dev");
  absl::StatusOr<FluxCheckpointConfigs> configs =
      FluxPresetConfigs(families::kFluxDevDefaults, CheckpointPreset::kTiny);
  ASSERT_TRUE(configs.ok()) << configs.status();
  absl::StatusOr<std::unique_ptr<families::FluxPromptEncoder>> encoder =
      families::FluxPromptEncoder::Load(dir, models::Placement{});
  ASSERT_TRUE(encoder.ok()) << encoder.status();

  constexpr int kMaxSequenceLength = 16;
  absl::StatusOr<families::FluxPromptEmbeddings> embeddings =
      (*encoder)->Encode({kSentence, "A rusty robot dances in the rain"},
                         kMaxSequenceLength);
  ASSERT_TRUE(embeddings.ok()) << embeddings.status();
  const int64_t joint_dim = configs->transformer.joint_attention_dim;
  const int64_t pooled_dim = configs->transformer.pooled_projection_dim;
  EXPECT_EQ(embeddings->prompt_embeds.sizes(),
            (at::IntArrayRef{2, kMaxSequenceLength, joint_dim}));
  EXPECT_EQ(embeddings->pooled_prompt_embeds.sizes(),
            (at::IntArrayRef{2, pooled_dim}));
  EXPECT_TRUE(embeddings->prompt_embeds.isfinite().all().item<bool>());
  EXPECT_TRUE(embeddings->pooled_prompt_embeds.isfinite().all().item<bool>());
  EXPECT_FALSE(
      at::allclose(embeddings->prompt_embeds[0], embeddings->prompt_embeds[1]));
  EXPECT_FALSE(at::allclose(embeddings->pooled_prompt_embeds[0],
                            embeddings->pooled_prompt_embeds[1]));
}

TEST_F(TextComponentsTest, T5TokenizerSplitsEnglishIntoKnownPieces) {
  const std::string dir = WriteTiny(0, "dev");
  absl::StatusOr<tokenizers::T5Tokenizer> tokenizer =
      tokenizers::T5Tokenizer::Load(dir + "/tokenizer_2");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  absl::StatusOr<std::vector<int64_t>> ids = tokenizer->Encode(kSentence);
  ASSERT_TRUE(ids.ok()) << ids.status();
  ASSERT_GE(ids->size(), 2U);
  EXPECT_EQ(ids->back(), tokenizer->eos_token_id());
  // <unk> is id 2; words of the corpus are whole pieces or a few parts.
  const std::vector<int64_t> text_ids(ids->begin(), ids->end() - 1);
  EXPECT_THAT(text_ids, Each(Ne(2)));
  EXPECT_LT(text_ids.size(), std::string(kSentence).size() / 2);

  absl::StatusOr<std::vector<int64_t>> sentinel =
      tokenizer->Encode("<extra_id_0>");
  ASSERT_TRUE(sentinel.ok()) << sentinel.status();
  absl::StatusOr<nlohmann::json> config =
      base::ReadJsonFile(dir + "/text_encoder_2/config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  // <extra_id_0> is the last id of the vocabulary.
  EXPECT_EQ(sentinel->front(), config->at("vocab_size").get<int64_t>() - 1);
}

TEST_F(TextComponentsTest, ClipTokenizerWrapsMergedWordsInBosAndEos) {
  const std::string dir = WriteTiny(0, "dev");
  absl::StatusOr<tokenizers::CLIPTokenizer> tokenizer =
      tokenizers::CLIPTokenizer::Load(dir + "/tokenizer");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  EXPECT_EQ(tokenizer->model_max_length(), 77);
  absl::StatusOr<std::vector<int64_t>> ids = tokenizer->Encode(kSentence);
  ASSERT_TRUE(ids.ok()) << ids.status();
  ASSERT_GE(ids->size(), 3U);
  EXPECT_EQ(ids->front(), tokenizer->bos_token_id());
  EXPECT_EQ(ids->back(), tokenizer->eos_token_id());
  // Learned merges: far fewer tokens than characters.
  EXPECT_LT(ids->size(), std::string(kSentence).size() / 2);

  absl::StatusOr<nlohmann::json> config =
      base::ReadJsonFile(dir + "/text_encoder/config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->at("eos_token_id").get<int64_t>(),
            tokenizer->eos_token_id());
  const int64_t vocab_size = config->at("vocab_size").get<int64_t>();
  EXPECT_THAT(*ids, Each(Lt(vocab_size)));
  EXPECT_EQ(tokenizer->eos_token_id(), vocab_size - 1);
}

TEST_F(TextComponentsTest, ModelIndexListsTheTextComponents) {
  const std::string dir = WriteTiny(0, "dev");
  absl::StatusOr<nlohmann::json> index =
      base::ReadJsonFile(dir + "/model_index.json");
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_EQ(index->at("text_encoder"),
            nlohmann::json({"transformers", "CLIPTextModel"}));
  EXPECT_EQ(index->at("text_encoder_2"),
            nlohmann::json({"transformers", "T5EncoderModel"}));
  EXPECT_EQ(index->at("tokenizer"),
            nlohmann::json({"transformers", "CLIPTokenizer"}));
  EXPECT_EQ(index->at("tokenizer_2"),
            nlohmann::json({"transformers", "T5Tokenizer"}));
  EXPECT_EQ(index->at("transformer"),
            nlohmann::json({"diffusers", "FluxTransformer2DModel"}));
}

TEST_F(TextComponentsTest, SameSeedWritesIdenticalFiles) {
  const std::string first = WriteTiny(7, "first");
  const std::string second = WriteTiny(7, "second");
  const std::vector<std::string> files = TextFiles(first);
  ASSERT_EQ(files, TextFiles(second));
  EXPECT_THAT(files, ::testing::Contains("tokenizer_2/spiece.model"));
  for (const std::string& file : files) {
    // A boolean: printing two differing binary files helps nobody.
    EXPECT_TRUE(Bytes(std::filesystem::path(first) / file) ==
                Bytes(std::filesystem::path(second) / file))
        << file << " differs";
  }
}

TEST_F(TextComponentsTest, OtherSeedChangesWeightsButNotTokenizers) {
  const std::string first = WriteTiny(7, "first");
  const std::string other = WriteTiny(8, "other");
  for (const char* file :
       {"text_encoder/model.safetensors", "text_encoder_2/model.safetensors"}) {
    EXPECT_FALSE(Bytes(std::filesystem::path(first) / file) ==
                 Bytes(std::filesystem::path(other) / file))
        << file << " is the same for seeds 7 and 8";
  }
  for (const char* file : {"tokenizer/vocab.json", "tokenizer/merges.txt",
                           "tokenizer_2/spiece.model"}) {
    EXPECT_TRUE(Bytes(std::filesystem::path(first) / file) ==
                Bytes(std::filesystem::path(other) / file))
        << file << " depends on the seed";
  }
}

TEST_F(TextComponentsTest, WidthNotDividedByHeadsIsInvalid) {
  const absl::Status status =
      WriteTextComponents(CheckpointPreset::kTiny, 0,
                          {{.kind = TextEncoderSlot::Kind::kT5,
                            .width = 30,
                            .tokenizer = "tokenizer",
                            .text_encoder = "text_encoder"}},
                          (root_ / "bad").string());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("T5 d_model 30"));
}

TEST_F(TextComponentsTest, MissingModelIndexIsAPreconditionError) {
  const absl::Status status =
      WriteTextComponents(CheckpointPreset::kTiny, 0,
                          {{.kind = TextEncoderSlot::Kind::kClip,
                            .width = 32,
                            .tokenizer = "tokenizer",
                            .text_encoder = "text_encoder"}},
                          (root_ / "text_only").string());
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("model_index.json"));
}

}  // namespace
}  // namespace ditserve::checkpoints
