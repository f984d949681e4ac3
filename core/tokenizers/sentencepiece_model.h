#ifndef DITSERVE_CORE_TOKENIZERS_SENTENCEPIECE_MODEL_H_
#define DITSERVE_CORE_TOKENIZERS_SENTENCEPIECE_MODEL_H_

// The only code that includes SentencePiece. Its public header declares
// `namespace absl { using std::string_view; }`, which collides with Debian's
// Abseil (a distinct absl::string_view class), so this interface speaks only
// standard types and reports errors as text; T5Tokenizer turns them into
// absl::Status.

#include <memory>
#include <string>
#include <vector>

namespace ditserve::tokenizers {

class SentencePieceModel {
 public:
  // nullptr with `*error` set when `path` is missing or not a model proto.
  static std::unique_ptr<SentencePieceModel> Load(const std::string& path,
                                                  std::string* error);
  ~SentencePieceModel();

  // Piece ids of `text` (normalised by the model's own rules). False with
  // `*error` set when SentencePiece rejects the input.
  bool Encode(const std::string& text, std::vector<int>* ids,
              std::string* error) const;

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
  struct Impl;
  explicit SentencePieceModel(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
};

}  // namespace ditserve::tokenizers

#endif  // DITSERVE_CORE_TOKENIZERS_SENTENCEPIECE_MODEL_H_
