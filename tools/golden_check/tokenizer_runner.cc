// Golden tokenizer cases: every test string of case.json, its ids and its
// padded ids and attention mask, compared exactly. T5 is held to the
// T5TokenizerFast ids ("fast"), CLIP to CLIPTokenizer's with both pad tokens
// the pipelines use (<|endoftext|> for CLIP-L, "!" for SD3's CLIP-G).

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/tokenizers/clip_tokenizer.h"
#include "core/tokenizers/t5_tokenizer.h"
#include "tools/golden_check/runners.h"

namespace ditserve::golden {
namespace {

constexpr int kClipMaxLength = 77;

at::Tensor IdsTensor(const std::vector<int64_t>& ids) {
  return torch::tensor(ids, torch::kLong);
}

// Compares `actual` with the id list `expected` exactly, named
// "<case index>.<field>".
OutputComparison CompareIds(size_t index, const std::string& field,
                            const std::vector<int64_t>& actual,
                            const nlohmann::json& expected) {
  return CompareOutput(absl::StrCat(index, ".", field), IdsTensor(actual),
                       IdsTensor(expected.get<std::vector<int64_t>>()),
                       Tolerance{});
}

absl::StatusOr<const nlohmann::json*> Cases(const GoldenCase& golden_case) {
  auto cases = golden_case.spec.find("cases");
  if (cases == golden_case.spec.end() || !cases->is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(golden_case.dir, "/case.json has no \"cases\" list"));
  }
  return &*cases;
}

}  // namespace

absl::StatusOr<std::vector<OutputComparison>> RunT5TokenizerCase(
    const GoldenCase& golden_case) {
  ASSIGN_OR_RETURN(const nlohmann::json* cases, Cases(golden_case));
  ASSIGN_OR_RETURN(tokenizers::T5Tokenizer tokenizer,
                   tokenizers::T5Tokenizer::Load(golden_case.dir));
  const int max_length = golden_case.spec.value("max_length", 0);

  std::vector<OutputComparison> comparisons;
  try {
    for (size_t i = 0; i < cases->size(); ++i) {
      const nlohmann::json& entry = (*cases)[i];
      const std::string text = entry.at("text").get<std::string>();
      const nlohmann::json& fast = entry.at("fast");
      ASSIGN_OR_RETURN(std::vector<int64_t> ids, tokenizer.Encode(text));
      comparisons.push_back(CompareIds(i, "ids", ids, fast.at("ids")));
      ASSIGN_OR_RETURN(tokenizers::TokenizedText padded,
                       tokenizer.EncodePadded(text, max_length));
      comparisons.push_back(
          CompareIds(i, "padded_ids", padded.input_ids, fast.at("padded_ids")));
      comparisons.push_back(CompareIds(i, "padded_attention_mask",
                                       padded.attention_mask,
                                       fast.at("padded_attention_mask")));
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(golden_case.dir, "/case.json: ", e.what()));
  }
  return comparisons;
}

absl::StatusOr<std::vector<OutputComparison>> RunCLIPTokenizerCase(
    const GoldenCase& golden_case) {
  ASSIGN_OR_RETURN(const nlohmann::json* cases, Cases(golden_case));
  ASSIGN_OR_RETURN(tokenizers::CLIPTokenizer tokenizer,
                   tokenizers::CLIPTokenizer::Load(golden_case.dir));
  tokenizers::CLIPTokenizerOptions pad_bang;
  pad_bang.pad_token = "!";
  ASSIGN_OR_RETURN(tokenizers::CLIPTokenizer bang_tokenizer,
                   tokenizers::CLIPTokenizer::Load(golden_case.dir, pad_bang));

  std::vector<OutputComparison> comparisons;
  try {
    for (size_t i = 0; i < cases->size(); ++i) {
      const nlohmann::json& entry = (*cases)[i];
      const std::string text = entry.at("text").get<std::string>();
      ASSIGN_OR_RETURN(std::vector<int64_t> ids, tokenizer.Encode(text));
      comparisons.push_back(CompareIds(i, "ids", ids, entry.at("ids")));
      ASSIGN_OR_RETURN(tokenizers::TokenizedText padded,
                       tokenizer.EncodePadded(text, kClipMaxLength));
      comparisons.push_back(CompareIds(i, "padded_ids", padded.input_ids,
                                       entry.at("padded_ids")));
      comparisons.push_back(CompareIds(i, "padded_attention_mask",
                                       padded.attention_mask,
                                       entry.at("padded_attention_mask")));
      ASSIGN_OR_RETURN(tokenizers::TokenizedText bang_padded,
                       bang_tokenizer.EncodePadded(text, kClipMaxLength));
      comparisons.push_back(CompareIds(i, "padded_ids_pad_bang",
                                       bang_padded.input_ids,
                                       entry.at("padded_ids_pad_bang")));
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(golden_case.dir, "/case.json: ", e.what()));
  }
  return comparisons;
}

}  // namespace ditserve::golden
