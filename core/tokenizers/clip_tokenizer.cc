#include "core/tokenizers/clip_tokenizer.h"

#include <re2/re2.h>

#include <filesystem>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "core/tokenizers/clip_text_cleaner.h"
#include "core/tokenizers/tokenizer_files.h"

namespace ditserve::tokenizers {
namespace {

constexpr char kStartOfText[] = "<|startoftext|>";
constexpr char kEndOfText[] = "<|endoftext|>";
// CLIPTokenizer reads merges.txt lines [1, 49152 - 256 - 2]: the merges of
// openai CLIP's 49408-token vocabulary.
constexpr int kMaxMerges = 49152 - 256 - 2;
constexpr int kDefaultModelMaxLength = 77;

// CLIPTokenizer.pat (compiled with re.IGNORECASE); \s only ever sees ' '
// here because CleanClipText leaves no other whitespace.
const RE2& WordPattern() {
  static const RE2* pattern = [] {
    RE2::Options options;
    options.set_case_sensitive(false);
    return new RE2(
        R"((<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|)"
        R"([\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+))",
        options);
  }();
  return *pattern;
}

std::string PathIn(const std::string& dir, const char* file) {
  return (std::filesystem::path(dir) / file).string();
}

absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> ReadVocab(
    const std::string& path) {
  ASSIGN_OR_RETURN(nlohmann::json json, base::ReadJsonObjectFile(path));
  absl::flat_hash_map<std::string, int64_t> vocab;
  for (const auto& [token, id] : json.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tokenizer file ", path, ": token \"", token, "\" maps to ",
          id.dump(), ", expected a non-negative integer id"));
    }
    vocab[token] = id.get<int64_t>();
  }
  return vocab;
}

}  // namespace

absl::StatusOr<CLIPTokenizer> CLIPTokenizer::Load(
    const std::string& dir, const CLIPTokenizerOptions& options) {
  CLIPTokenizer tokenizer;
  const std::string vocab_path = PathIn(dir, "vocab.json");
  ASSIGN_OR_RETURN(auto vocab, ReadVocab(vocab_path));
  tokenizer.vocab_ = std::move(vocab);

  const std::string merges_path = PathIn(dir, "merges.txt");
  ASSIGN_OR_RETURN(std::string merges_text, ReadWholeFile(merges_path));
  ASSIGN_OR_RETURN(ByteLevelBpe bpe, ByteLevelBpe::FromMergesText(
                                         merges_text, merges_path, kMaxMerges));
  tokenizer.bpe_ = std::move(bpe);

  ASSIGN_OR_RETURN(nlohmann::json config, ReadOptionalTokenizerConfig(dir));
  if (options.pad_token.has_value()) config["pad_token"] = *options.pad_token;

  // transformers adds every special token (and the config's added tokens) to
  // the added-token trie, so e.g. SD3's pad "!" is cut out of the text too.
  absl::flat_hash_map<std::string, int64_t> added;
  auto special_id = [&](const char* key,
                        const char* fallback) -> absl::StatusOr<int64_t> {
    const std::string content =
        SpecialTokenContent(config, key).value_or(fallback);
    auto it = tokenizer.vocab_.find(content);
    if (it == tokenizer.vocab_.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("CLIP tokenizer in ", dir, ": ", key, " \"", content,
                       "\" is not in ", vocab_path));
    }
    added[content] = it->second;
    return it->second;
  };
  ASSIGN_OR_RETURN(int64_t bos, special_id("bos_token", kStartOfText));
  ASSIGN_OR_RETURN(int64_t eos, special_id("eos_token", kEndOfText));
  ASSIGN_OR_RETURN(int64_t unk, special_id("unk_token", kEndOfText));
  ASSIGN_OR_RETURN(int64_t pad, special_id("pad_token", kEndOfText));
  if (auto decoder = config.find("added_tokens_decoder");
      decoder != config.end() && decoder->is_object()) {
    for (const auto& [id_text, entry] : decoder->items()) {
      int64_t id = 0;
      const std::optional<std::string> content =
          entry.is_object() ? SpecialTokenContent(entry, "content")
                            : std::nullopt;
      if (!absl::SimpleAtoi(id_text, &id) || !content.has_value()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "tokenizer file ", PathIn(dir, "tokenizer_config.json"),
            ": added_tokens_decoder entry \"", id_text,
            "\" is not {\"<id>\": {\"content\": \"<text>\"}}"));
      }
      added[*content] = id;
    }
  }
  tokenizer.splitter_ = AddedTokenSplitter(added);
  tokenizer.bos_id_ = bos;
  tokenizer.eos_id_ = eos;
  tokenizer.unk_id_ = unk;
  tokenizer.pad_id_ = pad;

  tokenizer.model_max_length_ = kDefaultModelMaxLength;
  if (auto length = config.find("model_max_length");
      length != config.end() && length->is_number_integer()) {
    tokenizer.model_max_length_ = length->get<int>();
  }
  return tokenizer;
}

int64_t CLIPTokenizer::TokenId(const std::string& token) const {
  auto it = vocab_.find(token);
  return it == vocab_.end() ? unk_id_ : it->second;
}

absl::StatusOr<std::vector<int64_t>> CLIPTokenizer::EncodeText(
    absl::string_view text) const {
  return splitter_.Encode(
      text,
      [this](absl::string_view plain,
             std::vector<int64_t>* ids) -> absl::Status {
        ASSIGN_OR_RETURN(std::string cleaned, CleanClipText(plain));
        re2::StringPiece rest(cleaned);
        re2::StringPiece word;
        while (RE2::FindAndConsume(&rest, WordPattern(), &word)) {
          // CLIPTokenizer's BPE cache maps the two marker words to
          // themselves, so a lower-cased "<|ENDOFTEXT|>" still becomes the
          // marker id.
          if (word == kStartOfText || word == kEndOfText) {
            ids->push_back(TokenId(std::string(word)));
            continue;
          }
          for (const std::string& symbol :
               bpe_.Encode(absl::string_view(word.data(), word.size()))) {
            ids->push_back(TokenId(symbol));
          }
        }
        return absl::OkStatus();
      });
}

absl::StatusOr<std::vector<int64_t>> CLIPTokenizer::Encode(
    absl::string_view text) const {
  ASSIGN_OR_RETURN(std::vector<int64_t> ids, EncodeText(text));
  ids.insert(ids.begin(), bos_id_);
  ids.push_back(eos_id_);
  return ids;
}

absl::StatusOr<TokenizedText> CLIPTokenizer::EncodePadded(
    absl::string_view text, int max_length) const {
  ASSIGN_OR_RETURN(std::vector<int64_t> ids, EncodeText(text));
  return TruncateAndPad(ids, /*prefix=*/{bos_id_}, /*suffix=*/{eos_id_},
                        max_length, pad_id_);
}

}  // namespace ditserve::tokenizers
