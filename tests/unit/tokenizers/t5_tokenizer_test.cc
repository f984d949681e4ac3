#include "core/tokenizers/t5_tokenizer.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/tokenizers/tokenizer_test_support.h"

namespace ditserve::tokenizers {
namespace {

using testing::GoldenTokenizerDir;
using ::testing::HasSubstr;
using testing::ReadGoldenCase;
using testing::ScratchDir;

constexpr char kCase[] = "t5_sp";

T5Tokenizer LoadGolden() {
  absl::StatusOr<T5Tokenizer> tokenizer =
      T5Tokenizer::Load(GoldenTokenizerDir(kCase));
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  return *std::move(tokenizer);
}

// Every golden string: ids with </s>, and the padded ids and mask of
// padding="max_length", truncation=True, as T5TokenizerFast returns them.
void ExpectMatchesGolden(const T5Tokenizer& tokenizer) {
  const nlohmann::json golden = ReadGoldenCase(kCase);
  const int max_length = golden.at("max_length").get<int>();
  ASSERT_EQ(golden.at("cases").size(), 30U);
  for (const nlohmann::json& entry : golden.at("cases")) {
    const std::string text = entry.at("text").get<std::string>();
    const nlohmann::json& fast = entry.at("fast");
    SCOPED_TRACE("text: \"" + text + "\"");

    absl::StatusOr<std::vector<int64_t>> ids = tokenizer.Encode(text);
    ASSERT_TRUE(ids.ok()) << ids.status();
    EXPECT_EQ(*ids, fast.at("ids").get<std::vector<int64_t>>());

    absl::StatusOr<TokenizedText> padded =
        tokenizer.EncodePadded(text, max_length);
    ASSERT_TRUE(padded.ok()) << padded.status();
    EXPECT_EQ(padded->input_ids,
              fast.at("padded_ids").get<std::vector<int64_t>>());
    EXPECT_EQ(padded->attention_mask,
              fast.at("padded_attention_mask").get<std::vector<int64_t>>());
  }
}

TEST(T5TokenizerTest, MatchesT5TokenizerFastOnEveryGoldenString) {
  ExpectMatchesGolden(LoadGolden());
}

TEST(T5TokenizerTest, WithoutTokenizerConfigUsesModelSpecialsAndSentinels) {
  ScratchDir dir;
  dir.CopyFrom(GoldenTokenizerDir(kCase), "spiece.model");
  absl::StatusOr<T5Tokenizer> tokenizer = T5Tokenizer::Load(dir.path());
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  EXPECT_EQ(tokenizer->eos_token_id(), 1);
  EXPECT_EQ(tokenizer->pad_token_id(), 0);
  ExpectMatchesGolden(*tokenizer);
}

TEST(T5TokenizerTest, SentinelTokensCountDownFromTheEndOfTheVocabulary) {
  const T5Tokenizer tokenizer = LoadGolden();
  absl::StatusOr<std::vector<int64_t>> ids =
      tokenizer.Encode("<extra_id_0><extra_id_99><extra_id_10>");
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::vector<int64_t>{399, 300, 389, 1}));
}

TEST(T5TokenizerTest, TruncationKeepsEosInTheLastPosition) {
  const T5Tokenizer tokenizer = LoadGolden();
  absl::StatusOr<TokenizedText> padded =
      tokenizer.EncodePadded("a photo of a cat", 4);
  ASSERT_TRUE(padded.ok()) << padded.status();
  EXPECT_EQ(padded->input_ids, (std::vector<int64_t>{4, 151, 3, 1}));
  EXPECT_EQ(padded->attention_mask, (std::vector<int64_t>{1, 1, 1, 1}));
}

TEST(T5TokenizerTest, MaxLengthWithoutRoomForEosIsAnError) {
  absl::StatusOr<TokenizedText> padded = LoadGolden().EncodePadded("a", 0);
  EXPECT_EQ(padded.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(T5TokenizerTest, InvalidUtf8IsAnErrorNamingTheOffset) {
  const T5Tokenizer tokenizer = LoadGolden();
  absl::StatusOr<std::vector<int64_t>> ids = tokenizer.Encode("ab\xC3(");
  EXPECT_EQ(ids.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ids.status().message(), HasSubstr("first bad byte at 2"));
  EXPECT_EQ(tokenizer.EncodePadded("\xFF", 16).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(T5TokenizerTest, MissingModelIsNotFoundNamingTheFile) {
  ScratchDir dir;
  absl::StatusOr<T5Tokenizer> tokenizer = T5Tokenizer::Load(dir.path());
  EXPECT_EQ(tokenizer.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(tokenizer.status().message(),
              HasSubstr(dir.path() + "/spiece.model"));
}

TEST(T5TokenizerTest, CorruptModelIsAnErrorNamingTheFile) {
  ScratchDir dir;
  dir.Write("spiece.model", "this is not a protobuf \xFF\xFF\xFF\x01");
  absl::StatusOr<T5Tokenizer> tokenizer = T5Tokenizer::Load(dir.path());
  EXPECT_EQ(tokenizer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(tokenizer.status().message(),
              HasSubstr(dir.path() + "/spiece.model"));
}

TEST(T5TokenizerTest, TruncatedModelIsAnErrorNamingTheFile) {
  ScratchDir dir;
  const std::string path =
      dir.CopyFrom(GoldenTokenizerDir(kCase), "spiece.model");
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  absl::StatusOr<T5Tokenizer> tokenizer = T5Tokenizer::Load(dir.path());
  EXPECT_EQ(tokenizer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(tokenizer.status().message(), HasSubstr(path));
}

TEST(T5TokenizerTest, CorruptTokenizerConfigIsAnErrorNamingTheFile) {
  ScratchDir dir;
  dir.CopyFrom(GoldenTokenizerDir(kCase), "spiece.model");
  dir.Write("tokenizer_config.json", "{\"added_tokens_decoder\": ");
  absl::StatusOr<T5Tokenizer> tokenizer = T5Tokenizer::Load(dir.path());
  EXPECT_EQ(tokenizer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(tokenizer.status().message(),
              HasSubstr(dir.path() + "/tokenizer_config.json"));
}

}  // namespace
}  // namespace ditserve::tokenizers
