#include "core/tokenizers/sentencepiece_model.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/status_macros.h"
#include "core/tokenizers/tokenizer_files.h"

namespace ditserve::tokenizers {
namespace {

constexpr char kShimFileName[] = "libditserve_sentencepiece.so";

// Room for SentencePiece's error messages, which name a status and a cause.
constexpr size_t kErrorCapacity = 512;

std::vector<std::string> ShimCandidates() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("DITSERVE_SENTENCEPIECE_SHIM")) {
    candidates.emplace_back(env);
  }
  std::error_code error;
  const std::filesystem::path exe =
      std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    candidates.push_back(
        (exe.parent_path().parent_path() / "lib" / kShimFileName).string());
  }
  candidates.emplace_back(DITSERVE_SENTENCEPIECE_SHIM_BUILD_PATH);
  return candidates;
}

struct ShimLoad {
  const SentencePieceApi* api = nullptr;
  std::string error;
};

ShimLoad LoadShim() {
  std::vector<std::string> failures;
  for (const std::string& candidate : ShimCandidates()) {
    std::error_code error;
    if (!std::filesystem::exists(candidate, error)) {
      failures.push_back(absl::StrCat(candidate, " (missing)"));
      continue;
    }
    // A namespace of its own: see sentencepiece_api.h.
    void* handle =
        dlmopen(LM_ID_NEWLM, candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      failures.push_back(absl::StrCat(candidate, " (", dlerror(), ")"));
      continue;
    }
    auto getter = reinterpret_cast<SentencePieceApiGetter>(
        dlsym(handle, kSentencePieceApiSymbol));
    if (getter == nullptr) {
      failures.push_back(
          absl::StrCat(candidate, " (no ", kSentencePieceApiSymbol, ")"));
      continue;
    }
    // The handle stays open for the life of the process.
    return {getter(), ""};
  }
  return {nullptr, absl::StrCat("cannot load the SentencePiece shim: ",
                                absl::StrJoin(failures, "; "))};
}

absl::StatusOr<const SentencePieceApi*> Api() {
  static const ShimLoad* shim = new ShimLoad(LoadShim());
  if (shim->api == nullptr) {
    return absl::FailedPreconditionError(shim->error);
  }
  return shim->api;
}

}  // namespace

SentencePieceModel::SentencePieceModel(const SentencePieceApi* api,
                                       void* processor)
    : api_(api), processor_(processor) {}

SentencePieceModel::~SentencePieceModel() { api_->release(processor_); }

absl::StatusOr<std::unique_ptr<SentencePieceModel>> SentencePieceModel::Load(
    const std::string& path) {
  // NotFound, naming the path, when the file is not there.
  ASSIGN_OR_RETURN(const std::string serialized_model, ReadWholeFile(path));
  ASSIGN_OR_RETURN(const SentencePieceApi* api, Api());
  char error[kErrorCapacity] = "";
  void* processor = api->load(serialized_model.data(), serialized_model.size(),
                              error, sizeof(error));
  if (processor == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SentencePiece model ", path, " cannot be loaded: ", error));
  }
  return std::unique_ptr<SentencePieceModel>(
      new SentencePieceModel(api, processor));
}

absl::StatusOr<std::vector<int>> SentencePieceModel::Encode(
    absl::string_view text) const {
  // Every id covers at least one byte of the text, but for the word-start
  // piece the model may prepend: one pass almost always suffices.
  std::vector<int> ids(text.size() + 1);
  for (;;) {
    char error[kErrorCapacity] = "";
    const long count =
        api_->encode(processor_, text.data(), text.size(), ids.data(),
                     ids.size(), error, sizeof(error));
    if (count < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("SentencePiece cannot encode the text: ", error));
    }
    const size_t needed = static_cast<size_t>(count);
    const bool complete = needed <= ids.size();
    ids.resize(needed);
    if (complete) return ids;
  }
}

int SentencePieceModel::piece_count() const {
  return api_->piece_count(processor_);
}

int SentencePieceModel::PieceToId(const std::string& piece) const {
  return api_->piece_to_id(processor_, piece.data(), piece.size());
}

std::string SentencePieceModel::IdToPiece(int id) const {
  std::string piece(api_->id_to_piece(processor_, id, nullptr, 0), '\0');
  api_->id_to_piece(processor_, id, piece.data(), piece.size());
  return piece;
}

int SentencePieceModel::eos_id() const { return api_->eos_id(processor_); }
int SentencePieceModel::pad_id() const { return api_->pad_id(processor_); }
int SentencePieceModel::unk_id() const { return api_->unk_id(processor_); }

}  // namespace ditserve::tokenizers
