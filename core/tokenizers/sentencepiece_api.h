#ifndef DITSERVE_CORE_TOKENIZERS_SENTENCEPIECE_API_H_
#define DITSERVE_CORE_TOKENIZERS_SENTENCEPIECE_API_H_

// The table of functions libditserve_sentencepiece.so (sentencepiece_shim.cc)
// hands to SentencePieceModel. Debian's libsentencepiece exports the symbols
// of its bundled protobuf-lite; linked into a process that also loads
// libprotobuf (LibTorch, gRPC) the two copies interpose each other and the
// process crashes during static initialisation. So SentencePiece lives in
// this shim, which is loaded into a link-map namespace of its own
// (dlmopen(LM_ID_NEWLM), sentencepiece_model.cc) with its own libc and
// libstdc++. RTLD_DEEPBIND, the other way to keep the protobuf private, is
// refused by the sanitizer runtimes, and with a PyTorch wheel's LibTorch it
// bound SentencePiece's iostream locale facets to the executable's
// libstdc++, which crashed in std::codecvt<>::do_unshift.
//
// Each namespace has its own heap, so only plain data crosses the boundary:
// what one side allocates, the same side frees. Error messages are written,
// truncated and NUL-terminated, into the caller's buffer.

#include <cstddef>

namespace ditserve::tokenizers {

struct SentencePieceApi {
  // An opaque processor for a model file's bytes, or nullptr with `error`
  // set.
  void* (*load)(const char* model, size_t model_size, char* error,
                size_t error_capacity);
  void (*release)(void* processor);
  // The number of ids of `text`, of which the first `ids_capacity` are
  // written to `ids`; -1 with `error` set when SentencePiece rejects it.
  long (*encode)(const void* processor, const char* text, size_t text_size,
                 int* ids, size_t ids_capacity, char* error,
                 size_t error_capacity);
  int (*piece_count)(const void* processor);
  // The unk id for an unknown piece.
  int (*piece_to_id)(const void* processor, const char* piece,
                     size_t piece_size);
  // The length of piece `id`, of which the first `capacity` bytes are
  // written to `piece`; 0 for an id out of range.
  size_t (*id_to_piece)(const void* processor, int id, char* piece,
                        size_t capacity);
  // -1 when the model has none.
  int (*eos_id)(const void* processor);
  int (*pad_id)(const void* processor);
  int (*unk_id)(const void* processor);
};

// The one symbol the shim exports.
inline constexpr char kSentencePieceApiSymbol[] = "ditserve_sentencepiece_api";
using SentencePieceApiGetter = const SentencePieceApi* (*)();

}  // namespace ditserve::tokenizers

#endif  // DITSERVE_CORE_TOKENIZERS_SENTENCEPIECE_API_H_
