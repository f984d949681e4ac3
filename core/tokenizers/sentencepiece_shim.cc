// libditserve_sentencepiece.so: Debian's SentencePiece behind the function
// table of sentencepiece_api.h. This file must not include Abseil: the
// SentencePiece header declares its own absl::string_view.

#include <sentencepiece_processor.h>

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "core/tokenizers/sentencepiece_api.h"

namespace ditserve::tokenizers {
namespace {

using sentencepiece::SentencePieceProcessor;

const SentencePieceProcessor& Processor(const void* processor) {
  return *static_cast<const SentencePieceProcessor*>(processor);
}

void* Load(const std::string& serialized_model, std::string* error) {
  // No exception may cross the dlopen boundary. SentencePiece's bundled
  // protobuf throws when it meets another protobuf runtime, which happens
  // only where the shim cannot be loaded with RTLD_DEEPBIND
  // (sentencepiece_model.cc).
  try {
    auto processor = std::make_unique<SentencePieceProcessor>();
    const sentencepiece::util::Status status =
        processor->LoadFromSerializedProto(serialized_model);
    if (!status.ok()) {
      *error = status.ToString();
      return nullptr;
    }
    return processor.release();
  } catch (const std::exception& exception) {
    *error = exception.what();
    return nullptr;
  }
}

void Release(void* processor) {
  delete static_cast<SentencePieceProcessor*>(processor);
}

bool Encode(const void* processor, const std::string& text,
            std::vector<int>* ids, std::string* error) {
  const sentencepiece::util::Status status =
      Processor(processor).Encode(text, ids);
  if (!status.ok()) {
    *error = status.ToString();
    return false;
  }
  return true;
}

int PieceCount(const void* processor) {
  return Processor(processor).GetPieceSize();
}

int PieceToId(const void* processor, const std::string& piece) {
  return Processor(processor).PieceToId(piece);
}

std::string IdToPiece(const void* processor, int id) {
  if (id < 0 || id >= PieceCount(processor)) return {};
  return Processor(processor).IdToPiece(id);
}

int EosId(const void* processor) { return Processor(processor).eos_id(); }
int PadId(const void* processor) { return Processor(processor).pad_id(); }
int UnkId(const void* processor) { return Processor(processor).unk_id(); }

constexpr SentencePieceApi kApi = {Load,       Release,   Encode,
                                   PieceCount, PieceToId, IdToPiece,
                                   EosId,      PadId,     UnkId};

}  // namespace
}  // namespace ditserve::tokenizers

extern "C" __attribute__((visibility("default")))
const ditserve::tokenizers::SentencePieceApi*
ditserve_sentencepiece_api() {
  return &ditserve::tokenizers::kApi;
}
