#include "core/tokenizers/t5_tokenizer.h"

#include <filesystem>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/tokenizers/tokenizer_files.h"

namespace ditserve::tokenizers {
namespace {

// transformers' T5Tokenizer default (`extra_ids=100`).
constexpr int kDefaultExtraIds = 100;

using TokenIds = absl::flat_hash_map<std::string, int64_t>;

// The added tokens listed in `added_tokens_decoder` ("300": {"content":
// "<extra_id_99>", ...}), as T5Tokenizer.save_pretrained writes them.
absl::StatusOr<TokenIds> AddedTokensFromConfig(const nlohmann::json& decoder,
                                               const std::string& config_path) {
  TokenIds tokens;
  for (const auto& [id_text, entry] : decoder.items()) {
    int64_t id = 0;
    const std::optional<std::string> content =
        entry.is_object() ? SpecialTokenContent(entry, "content")
                          : std::nullopt;
    if (!absl::SimpleAtoi(id_text, &id) || id < 0 || !content.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tokenizer file ", config_path, ": added_tokens_decoder entry \"",
          id_text, "\" is not {\"<id>\": {\"content\": \"<text>\"}}"));
    }
    tokens[*content] = id;
  }
  return tokens;
}

// What T5Tokenizer adds without a saved config: the model's own special
// pieces and the `<extra_id_N>` sentinels after the SentencePiece vocabulary,
// `<extra_id_0>` last.
TokenIds DefaultAddedTokens(const SentencePieceModel& model, int extra_ids) {
  TokenIds tokens;
  for (int id : {model.pad_id(), model.eos_id(), model.unk_id()}) {
    if (id >= 0) tokens[model.IdToPiece(id)] = id;
  }
  for (int n = 0; n < extra_ids; ++n) {
    tokens[absl::StrCat("<extra_id_", n, ">")] =
        model.piece_count() + extra_ids - 1 - n;
  }
  return tokens;
}

// Id of the special token named by `key` in the config (else the model's own
// piece `fallback_id`): an added token, or a piece of the model.
absl::StatusOr<int64_t> SpecialTokenId(const nlohmann::json& config,
                                       const char* key, int fallback_id,
                                       const TokenIds& added,
                                       const SentencePieceModel& model,
                                       const std::string& dir) {
  const std::optional<std::string> content = SpecialTokenContent(config, key);
  if (!content.has_value()) {
    if (fallback_id < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("T5 tokenizer in ", dir, " has no ", key,
                       ": neither tokenizer_config.json nor spiece.model "
                       "defines one"));
    }
    return fallback_id;
  }
  if (auto it = added.find(*content); it != added.end()) return it->second;
  const int id = model.PieceToId(*content);
  if (model.IdToPiece(id) != *content) {
    return absl::InvalidArgumentError(
        absl::StrCat("T5 tokenizer in ", dir, ": ", key, " \"", *content,
                     "\" is neither an added token nor a piece of "
                     "spiece.model"));
  }
  return id;
}

}  // namespace

T5Tokenizer::T5Tokenizer(std::unique_ptr<SentencePieceModel> model,
                         AddedTokenSplitter splitter, int64_t eos_id,
                         int64_t pad_id)
    : model_(std::move(model)),
      splitter_(std::move(splitter)),
      eos_id_(eos_id),
      pad_id_(pad_id) {}

absl::StatusOr<T5Tokenizer> T5Tokenizer::Load(const std::string& dir) {
  const std::string model_path =
      (std::filesystem::path(dir) / "spiece.model").string();
  absl::StatusOr<std::unique_ptr<SentencePieceModel>> model =
      SentencePieceModel::Load(model_path);
  if (!model.ok()) {
    return absl::Status(
        model.status().code(),
        absl::StrCat("T5 tokenizer: ", model.status().message()));
  }

  ASSIGN_OR_RETURN(nlohmann::json config, ReadOptionalTokenizerConfig(dir));
  TokenIds added;
  if (auto decoder = config.find("added_tokens_decoder");
      decoder != config.end() && decoder->is_object()) {
    ASSIGN_OR_RETURN(
        TokenIds from_config,
        AddedTokensFromConfig(
            *decoder,
            (std::filesystem::path(dir) / "tokenizer_config.json").string()));
    added = std::move(from_config);
  } else {
    int extra_ids = kDefaultExtraIds;
    if (auto count = config.find("extra_ids");
        count != config.end() && count->is_number_integer()) {
      extra_ids = count->get<int>();
    }
    added = DefaultAddedTokens(**model, extra_ids);
  }

  ASSIGN_OR_RETURN(int64_t eos_id,
                   SpecialTokenId(config, "eos_token", (*model)->eos_id(),
                                  added, **model, dir));
  ASSIGN_OR_RETURN(int64_t pad_id,
                   SpecialTokenId(config, "pad_token", (*model)->pad_id(),
                                  added, **model, dir));

  return T5Tokenizer(*std::move(model), AddedTokenSplitter(added), eos_id,
                     pad_id);
}

absl::StatusOr<std::vector<int64_t>> T5Tokenizer::EncodeText(
    absl::string_view text) const {
  return splitter_.Encode(
      text,
      [this](absl::string_view plain,
             std::vector<int64_t>* ids) -> absl::Status {
        ASSIGN_OR_RETURN(std::vector<int> piece_ids, model_->Encode(plain));
        ids->insert(ids->end(), piece_ids.begin(), piece_ids.end());
        return absl::OkStatus();
      });
}

absl::StatusOr<std::vector<int64_t>> T5Tokenizer::Encode(
    absl::string_view text) const {
  ASSIGN_OR_RETURN(std::vector<int64_t> ids, EncodeText(text));
  ids.push_back(eos_id_);
  return ids;
}

absl::StatusOr<TokenizedText> T5Tokenizer::EncodePadded(absl::string_view text,
                                                        int max_length) const {
  ASSIGN_OR_RETURN(std::vector<int64_t> ids, EncodeText(text));
  return TruncateAndPad(ids, /*prefix=*/{}, /*suffix=*/{eos_id_}, max_length,
                        pad_id_);
}

}  // namespace ditserve::tokenizers
