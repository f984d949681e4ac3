#ifndef DITSERVE_CORE_TOKENIZERS_SENTENCEPIECE_MODEL_H_
#define DITSERVE_CORE_TOKENIZERS_SENTENCEPIECE_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/tokenizers/sentencepiece_api.h"

namespace ditserve::tokenizers {

// A SentencePiece model (spiece.model), run by Debian's libsentencepiece
// through libditserve_sentencepiece.so (see sentencepiece_api.h for why it
// is loaded privately). The shim is looked up, in order, at
// $DITSERVE_SENTENCEPIECE_SHIM, <executable dir>/../lib/, and where the
// build put it.
class SentencePieceModel {
 public:
  // NOT_FOUND when `path` does not exist, INVALID_ARGUMENT when it is not a
  // model, FAILED_PRECONDITION when the shim cannot be loaded; errors name
  // `path` (or the shim paths tried).
  static absl::StatusOr<std::unique_ptr<SentencePieceModel>> Load(
      const std::string& path);
  ~SentencePieceModel();
  SentencePieceModel(const SentencePieceModel&) = delete;
  SentencePieceModel& operator=(const SentencePieceModel&) = delete;

  // Piece ids of `text`, normalised by the model's own rules.
  absl::StatusOr<std::vector<int>> Encode(absl::string_view text) const;

  int piece_count() const;
  // The model's unk id for an unknown piece.
  int PieceToId(const std::string& piece) const;
  // Empty when `id` is out of range.
  std::string IdToPiece(int id) const;
  // -1 when the model has none.
  int eos_id() const;
  int pad_id() const;
  int unk_id() const;

 private:
  SentencePieceModel(const SentencePieceApi* api, void* processor);

  const SentencePieceApi* api_;
  void* processor_;
};

}  // namespace ditserve::tokenizers

#endif  // DITSERVE_CORE_TOKENIZERS_SENTENCEPIECE_MODEL_H_
