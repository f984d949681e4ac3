#include "core/tokenizers/clip_tokenizer.h"

#include <cstdint>
#include <fstream>
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

constexpr char kCase[] = "clip_bpe";
constexpr int kMaxLength = 77;

CLIPTokenizer LoadFrom(const std::string& dir) {
  absl::StatusOr<CLIPTokenizer> tokenizer = CLIPTokenizer::Load(dir);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  return *std::move(tokenizer);
}

// A copy of the golden tokenizer whose tokenizer_config.json is `config`.
void WriteTokenizerWithConfig(const ScratchDir& dir,
                              const nlohmann::json& config) {
  dir.CopyFrom(GoldenTokenizerDir(kCase), "vocab.json");
  dir.CopyFrom(GoldenTokenizerDir(kCase), "merges.txt");
  dir.Write("tokenizer_config.json", config.dump());
}

TEST(CLIPTokenizerTest, MatchesCLIPTokenizerOnEveryGoldenString) {
  const CLIPTokenizer tokenizer = LoadFrom(GoldenTokenizerDir(kCase));
  EXPECT_EQ(tokenizer.model_max_length(), kMaxLength);
  const nlohmann::json golden = ReadGoldenCase(kCase);
  ASSERT_EQ(golden.at("cases").size(), 30U);
  for (const nlohmann::json& entry : golden.at("cases")) {
    const std::string text = entry.at("text").get<std::string>();
    SCOPED_TRACE("text: \"" + text + "\"");

    absl::StatusOr<std::vector<int64_t>> ids = tokenizer.Encode(text);
    ASSERT_TRUE(ids.ok()) << ids.status();
    EXPECT_EQ(*ids, entry.at("ids").get<std::vector<int64_t>>());

    absl::StatusOr<TokenizedText> padded =
        tokenizer.EncodePadded(text, kMaxLength);
    ASSERT_TRUE(padded.ok()) << padded.status();
    EXPECT_EQ(padded->input_ids,
              entry.at("padded_ids").get<std::vector<int64_t>>());
    EXPECT_EQ(padded->attention_mask,
              entry.at("padded_attention_mask").get<std::vector<int64_t>>());
  }
}

TEST(CLIPTokenizerTest, PadTokenComesFromTheTokenizerConfig) {
  // SD3's CLIP-G tokenizer pads with "!" (id 0).
  ScratchDir dir;
  nlohmann::json config = nlohmann::json::parse(
      std::ifstream(GoldenTokenizerDir(kCase) + "/tokenizer_config.json"));
  config["pad_token"] = "!";
  WriteTokenizerWithConfig(dir, config);
  const CLIPTokenizer tokenizer = LoadFrom(dir.path());
  EXPECT_EQ(tokenizer.pad_token_id(), 0);

  const nlohmann::json golden = ReadGoldenCase(kCase);
  for (const nlohmann::json& entry : golden.at("cases")) {
    const std::string text = entry.at("text").get<std::string>();
    SCOPED_TRACE("text: \"" + text + "\"");
    absl::StatusOr<TokenizedText> padded =
        tokenizer.EncodePadded(text, kMaxLength);
    ASSERT_TRUE(padded.ok()) << padded.status();
    EXPECT_EQ(padded->input_ids,
              entry.at("padded_ids_pad_bang").get<std::vector<int64_t>>());
  }
}

TEST(CLIPTokenizerTest, PadTokenOptionOverridesTheConfig) {
  CLIPTokenizerOptions options;
  options.pad_token = "!";
  absl::StatusOr<CLIPTokenizer> tokenizer =
      CLIPTokenizer::Load(GoldenTokenizerDir(kCase), options);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  EXPECT_EQ(tokenizer->pad_token_id(), 0);
  absl::StatusOr<TokenizedText> padded = tokenizer->EncodePadded("x", 5);
  ASSERT_TRUE(padded.ok()) << padded.status();
  EXPECT_EQ(padded->input_ids, (std::vector<int64_t>{912, 343, 913, 0, 0}));
}

TEST(CLIPTokenizerTest, WithoutTokenizerConfigUsesCLIPDefaults) {
  ScratchDir dir;
  dir.CopyFrom(GoldenTokenizerDir(kCase), "vocab.json");
  dir.CopyFrom(GoldenTokenizerDir(kCase), "merges.txt");
  const CLIPTokenizer tokenizer = LoadFrom(dir.path());
  EXPECT_EQ(tokenizer.bos_token_id(), 912);
  EXPECT_EQ(tokenizer.eos_token_id(), 913);
  EXPECT_EQ(tokenizer.pad_token_id(), 913);
  EXPECT_EQ(tokenizer.model_max_length(), kMaxLength);
}

TEST(CLIPTokenizerTest, UpperCaseMarkerTextBecomesTheMarkerAfterLowerCasing) {
  const CLIPTokenizer tokenizer = LoadFrom(GoldenTokenizerDir(kCase));
  absl::StatusOr<std::vector<int64_t>> ids = tokenizer.Encode("<|ENDOFTEXT|>");
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::vector<int64_t>{912, 913, 913}));
}

TEST(CLIPTokenizerTest, TruncationKeepsBosAndEos) {
  const CLIPTokenizer tokenizer = LoadFrom(GoldenTokenizerDir(kCase));
  absl::StatusOr<TokenizedText> padded =
      tokenizer.EncodePadded("a photo of a cat", 4);
  ASSERT_TRUE(padded.ok()) << padded.status();
  EXPECT_EQ(padded->input_ids, (std::vector<int64_t>{912, 320, 79, 913}));
  EXPECT_EQ(padded->attention_mask, (std::vector<int64_t>{1, 1, 1, 1}));
}

TEST(CLIPTokenizerTest, InvalidUtf8IsAnErrorNamingTheOffset) {
  const CLIPTokenizer tokenizer = LoadFrom(GoldenTokenizerDir(kCase));
  absl::StatusOr<std::vector<int64_t>> ids =
      tokenizer.Encode("caf\xC3\xA9 \xED\xA0\x80");
  EXPECT_EQ(ids.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ids.status().message(), HasSubstr("first bad byte at 6"));
}

TEST(CLIPTokenizerTest, MissingVocabIsNotFoundNamingTheFile) {
  ScratchDir dir;
  dir.CopyFrom(GoldenTokenizerDir(kCase), "merges.txt");
  absl::StatusOr<CLIPTokenizer> tokenizer = CLIPTokenizer::Load(dir.path());
  EXPECT_EQ(tokenizer.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(tokenizer.status().message(),
              HasSubstr(dir.path() + "/vocab.json"));
}

TEST(CLIPTokenizerTest, MissingMergesIsNotFoundNamingTheFile) {
  ScratchDir dir;
  dir.CopyFrom(GoldenTokenizerDir(kCase), "vocab.json");
  absl::StatusOr<CLIPTokenizer> tokenizer = CLIPTokenizer::Load(dir.path());
  EXPECT_EQ(tokenizer.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(tokenizer.status().message(),
              HasSubstr(dir.path() + "/merges.txt"));
}

TEST(CLIPTokenizerTest, CorruptVocabIsAnErrorNamingTheFile) {
  for (const std::string& content :
       {std::string("{\"a\": 1, "), std::string("[1, 2]"),
        std::string("{\"a\": \"one\"}")}) {
    SCOPED_TRACE(content);
    ScratchDir dir;
    dir.CopyFrom(GoldenTokenizerDir(kCase), "merges.txt");
    dir.Write("vocab.json", content);
    absl::StatusOr<CLIPTokenizer> tokenizer = CLIPTokenizer::Load(dir.path());
    EXPECT_EQ(tokenizer.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(tokenizer.status().message(),
                HasSubstr(dir.path() + "/vocab.json"));
  }
}

TEST(CLIPTokenizerTest, CorruptMergesIsAnErrorNamingTheFileAndLine) {
  ScratchDir dir;
  dir.CopyFrom(GoldenTokenizerDir(kCase), "vocab.json");
  dir.Write("merges.txt", "#version: 0.2\ni n\nt h e\n");
  absl::StatusOr<CLIPTokenizer> tokenizer = CLIPTokenizer::Load(dir.path());
  EXPECT_EQ(tokenizer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(tokenizer.status().message(),
              HasSubstr(dir.path() + "/merges.txt line 3"));
}

TEST(CLIPTokenizerTest, SpecialTokenMissingFromVocabIsAnError) {
  ScratchDir dir;
  WriteTokenizerWithConfig(dir, {{"pad_token", "<pad>"}});
  absl::StatusOr<CLIPTokenizer> tokenizer = CLIPTokenizer::Load(dir.path());
  EXPECT_EQ(tokenizer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(tokenizer.status().message(), HasSubstr("pad_token \"<pad>\""));
}

}  // namespace
}  // namespace ditserve::tokenizers
