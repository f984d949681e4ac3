#include "core/checkpoints/clip_tokenizer_writer.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/checkpoints/bpe_merge_trainer.h"
#include "core/checkpoints/json_output.h"
#include "core/tokenizers/byte_level_bpe.h"
#include "nlohmann/json.hpp"

namespace ditserve::checkpoints {
namespace {

constexpr char kStartOfText[] = "<|startoftext|>";
constexpr char kEndOfText[] = "<|endoftext|>";
constexpr char kEndOfWord[] = "</w>";
// Every CLIP text encoder has 77 positions.
constexpr int kModelMaxLength = 77;

// CLIP's vocabulary order of the byte symbols: bytes_to_unicode's list, the
// printable bytes in byte order, then the others in byte order.
std::vector<std::string> ByteSymbolsInVocabularyOrder() {
  std::vector<std::string> printable;
  std::vector<std::string> others;
  for (int byte = 0; byte < 256; ++byte) {
    const bool is_printable = (byte >= '!' && byte <= '~') ||
                              (byte >= 0xA1 && byte <= 0xAC) ||
                              (byte >= 0xAE && byte <= 0xFF);
    (is_printable ? printable : others)
        .push_back(
            tokenizers::ByteSymbols(std::string(1, static_cast<char>(byte))));
  }
  printable.insert(printable.end(), others.begin(), others.end());
  return printable;
}

// The special tokens as CLIPTokenizer.save_pretrained describes them.
nlohmann::json AddedTokenJson(const char* content) {
  return {{"content", content},
          {"lstrip", false},
          {"normalized", true},
          {"rstrip", false},
          {"single_word", false}};
}

absl::Status WriteMerges(const std::vector<BpeMerge>& merges,
                         const std::filesystem::path& path) {
  std::ofstream out(path, std::ios::binary);
  out << "#version: 0.2\n";
  for (const BpeMerge& merge : merges) {
    out << merge.first << " " << merge.second << "\n";
  }
  out.close();
  if (!out) {
    return absl::InternalError(absl::StrCat("cannot write ", path.string()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ClipVocabulary> WriteClipTokenizer(const std::string& corpus,
                                                  int max_merges,
                                                  const std::string& pad_token,
                                                  const std::string& dir) {
  const std::filesystem::path root(dir);
  RETURN_IF_ERROR(CreateFolder(root));
  const std::vector<BpeMerge> merges =
      TrainBpeMerges(ClipStyleWords(corpus), max_merges);

  nlohmann::json vocab = nlohmann::json::object();
  int64_t next_id = 0;
  auto add = [&vocab, &next_id](const std::string& token) {
    // Two merges can spell the same symbol; it keeps its first id and the
    // ids stay contiguous.
    if (!vocab.contains(token)) vocab[token] = next_id++;
  };
  const std::vector<std::string> byte_symbols = ByteSymbolsInVocabularyOrder();
  for (const std::string& symbol : byte_symbols) add(symbol);
  for (const std::string& symbol : byte_symbols) add(symbol + kEndOfWord);
  for (const BpeMerge& merge : merges) add(merge.first + merge.second);
  ClipVocabulary out;
  out.bos_token_id = next_id;
  add(kStartOfText);
  out.eos_token_id = next_id;
  add(kEndOfText);
  out.vocab_size = next_id;
  if (!vocab.contains(pad_token)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pad token \"", pad_token, "\" is not in the vocabulary of ", dir));
  }

  RETURN_IF_ERROR(WriteJsonFile(root / "vocab.json", vocab));
  RETURN_IF_ERROR(WriteMerges(merges, root / "merges.txt"));
  nlohmann::json added_tokens_decoder = nlohmann::json::object();
  for (const auto& [id, content] : {std::pair{out.bos_token_id, kStartOfText},
                                    std::pair{out.eos_token_id, kEndOfText}}) {
    nlohmann::json entry = AddedTokenJson(content);
    entry["special"] = true;
    added_tokens_decoder[std::to_string(id)] = entry;
  }
  const nlohmann::json tokenizer_config = {
      {"added_tokens_decoder", added_tokens_decoder},
      {"bos_token", kStartOfText},
      {"clean_up_tokenization_spaces", true},
      {"eos_token", kEndOfText},
      {"errors", "replace"},
      {"model_max_length", kModelMaxLength},
      {"pad_token", pad_token},
      {"tokenizer_class", "CLIPTokenizer"},
      {"unk_token", kEndOfText},
  };
  RETURN_IF_ERROR(
      WriteJsonFile(root / "tokenizer_config.json", tokenizer_config));
  const nlohmann::json special_tokens_map = {
      {"bos_token", AddedTokenJson(kStartOfText)},
      {"eos_token", AddedTokenJson(kEndOfText)},
      {"pad_token", AddedTokenJson(pad_token.c_str())},
      {"unk_token", AddedTokenJson(kEndOfText)},
  };
  RETURN_IF_ERROR(
      WriteJsonFile(root / "special_tokens_map.json", special_tokens_map));
  return out;
}

}  // namespace ditserve::checkpoints
