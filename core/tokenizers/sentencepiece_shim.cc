// libditserve_sentencepiece.so: Debian's SentencePiece behind the function
// table of sentencepiece_api.h. This file must not include Abseil: the
// SentencePiece header declares its own absl::string_view.

#include <sentencepiece_processor.h>

#include <algorithm>
#include <cstring>
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

void WriteError(const std::string& message, char* error, size_t capacity) {
  if (capacity == 0) return;
  const size_t length = std::min(message.size(), capacity - 1);
  std::memcpy(error, message.data(), length);
  error[length] = '\0';
}

void* Load(const char* model, size_t model_size, char* error,
           size_t error_capacity) {
  // No exception may cross into the other namespace.
  try {
    auto processor = std::make_unique<SentencePieceProcessor>();
    const sentencepiece::util::Status status =
        processor->LoadFromSerializedProto(std::string(model, model_size));
    if (!status.ok()) {
      WriteError(status.ToString(), error, error_capacity);
      return nullptr;
    }
    return processor.release();
  } catch (const std::exception& exception) {
    WriteError(exception.what(), error, error_capacity);
    return nullptr;
  }
}

void Release(void* processor) {
  delete static_cast<SentencePieceProcessor*>(processor);
}

long Encode(const void* processor, const char* text, size_t text_size, int* ids,
            size_t ids_capacity, char* error, size_t error_capacity) {
  std::vector<int> encoded;
  const sentencepiece::util::Status status =
      Processor(processor).Encode(std::string(text, text_size), &encoded);
  if (!status.ok()) {
    WriteError(status.ToString(), error, error_capacity);
    return -1;
  }
  std::copy_n(encoded.begin(), std::min(encoded.size(), ids_capacity), ids);
  return static_cast<long>(encoded.size());
}

int PieceCount(const void* processor) {
  return Processor(processor).GetPieceSize();
}

int PieceToId(const void* processor, const char* piece, size_t piece_size) {
  return Processor(processor).PieceToId(std::string(piece, piece_size));
}

size_t IdToPiece(const void* processor, int id, char* piece, size_t capacity) {
  if (id < 0 || id >= PieceCount(processor)) return 0;
  const std::string& found = Processor(processor).IdToPiece(id);
  std::memcpy(piece, found.data(), std::min(found.size(), capacity));
  return found.size();
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
