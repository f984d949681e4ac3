#include "core/tokenizers/sentencepiece_model.h"

#include <sentencepiece_processor.h>

#include <utility>

namespace ditserve::tokenizers {

struct SentencePieceModel::Impl {
  sentencepiece::SentencePieceProcessor processor;
};

SentencePieceModel::SentencePieceModel(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

SentencePieceModel::~SentencePieceModel() = default;

std::unique_ptr<SentencePieceModel> SentencePieceModel::Load(
    const std::string& path, std::string* error) {
  auto impl = std::make_unique<Impl>();
  const sentencepiece::util::Status status = impl->processor.Load(path);
  if (!status.ok()) {
    *error = status.ToString();
    return nullptr;
  }
  return std::unique_ptr<SentencePieceModel>(
      new SentencePieceModel(std::move(impl)));
}

bool SentencePieceModel::Encode(const std::string& text, std::vector<int>* ids,
                                std::string* error) const {
  const sentencepiece::util::Status status = impl_->processor.Encode(text, ids);
  if (!status.ok()) {
    *error = status.ToString();
    return false;
  }
  return true;
}

int SentencePieceModel::piece_count() const {
  return impl_->processor.GetPieceSize();
}

int SentencePieceModel::PieceToId(const std::string& piece) const {
  return impl_->processor.PieceToId(piece);
}

std::string SentencePieceModel::IdToPiece(int id) const {
  if (id < 0 || id >= piece_count()) return {};
  return impl_->processor.IdToPiece(id);
}

int SentencePieceModel::eos_id() const { return impl_->processor.eos_id(); }
int SentencePieceModel::pad_id() const { return impl_->processor.pad_id(); }
int SentencePieceModel::unk_id() const { return impl_->processor.unk_id(); }

}  // namespace ditserve::tokenizers
