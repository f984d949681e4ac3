#include "core/checkpoints/t5_tokenizer_writer.h"

#include <filesystem>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/checkpoints/json_output.h"
#include "core/checkpoints/sentencepiece_trainer.h"
#include "nlohmann/json.hpp"

namespace ditserve::checkpoints {
namespace {

// transformers' T5Tokenizer default (`extra_ids=100`).
constexpr int kExtraIds = 100;
// The ids TrainT5SentencePiece gives the special pieces.
constexpr int64_t kPadId = 0;
constexpr int64_t kEosId = 1;
constexpr int64_t kUnkId = 2;
constexpr char kPad[] = "<pad>";
constexpr char kEos[] = "</s>";
constexpr char kUnk[] = "<unk>";
// T5's tokenizer_config.json value for every size of T5.
constexpr int kModelMaxLength = 512;

// A special token as T5Tokenizer.save_pretrained describes it.
nlohmann::json AddedTokenJson(const std::string& content) {
  return {{"content", content},
          {"lstrip", false},
          {"normalized", false},
          {"rstrip", false},
          {"single_word", false}};
}

}  // namespace

absl::StatusOr<T5Vocabulary> WriteT5Tokenizer(const std::string& corpus,
                                              int piece_count,
                                              const std::string& dir) {
  const std::filesystem::path root(dir);
  RETURN_IF_ERROR(CreateFolder(root));
  RETURN_IF_ERROR(TrainT5SentencePiece(corpus, piece_count,
                                       (root / "spiece.model").string()));

  nlohmann::json added_tokens_decoder = nlohmann::json::object();
  for (const auto& [id, content] :
       {std::pair{kPadId, kPad}, std::pair{kEosId, kEos},
        std::pair{kUnkId, kUnk}}) {
    nlohmann::json entry = AddedTokenJson(content);
    entry["special"] = true;
    added_tokens_decoder[std::to_string(id)] = entry;
  }
  nlohmann::json sentinels = nlohmann::json::array();
  nlohmann::json added_tokens = nlohmann::json::object();
  for (int n = 0; n < kExtraIds; ++n) {
    const std::string sentinel = absl::StrCat("<extra_id_", n, ">");
    // After the pieces, in reverse: <extra_id_0> has the highest id.
    const int64_t id = piece_count + kExtraIds - 1 - n;
    sentinels.push_back(sentinel);
    added_tokens[sentinel] = id;
    nlohmann::json entry = AddedTokenJson(sentinel);
    entry["special"] = true;
    added_tokens_decoder[std::to_string(id)] = entry;
  }

  const nlohmann::json tokenizer_config = {
      {"add_prefix_space", true},
      {"added_tokens_decoder", added_tokens_decoder},
      {"additional_special_tokens", sentinels},
      {"clean_up_tokenization_spaces", true},
      {"eos_token", kEos},
      {"extra_ids", kExtraIds},
      {"legacy", true},
      {"model_max_length", kModelMaxLength},
      {"pad_token", kPad},
      {"sp_model_kwargs", nlohmann::json::object()},
      {"tokenizer_class", "T5Tokenizer"},
      {"unk_token", kUnk},
  };
  const nlohmann::json special_tokens_map = {
      {"additional_special_tokens", sentinels},
      {"eos_token", AddedTokenJson(kEos)},
      {"pad_token", AddedTokenJson(kPad)},
      {"unk_token", AddedTokenJson(kUnk)},
  };
  for (const auto& [name, json] :
       {std::pair{"tokenizer_config.json", &tokenizer_config},
        std::pair{"special_tokens_map.json", &special_tokens_map},
        std::pair{"added_tokens.json", &std::as_const(added_tokens)}}) {
    RETURN_IF_ERROR(WriteJsonFile(root / name, *json));
  }
  T5Vocabulary out;
  out.vocab_size = piece_count + kExtraIds;
  out.pad_token_id = kPadId;
  out.eos_token_id = kEosId;
  return out;
}

}  // namespace ditserve::checkpoints
