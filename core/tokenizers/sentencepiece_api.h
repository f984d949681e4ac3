#ifndef DITSERVE_CORE_TOKENIZERS_SENTENCEPIECE_API_H_
#define DITSERVE_CORE_TOKENIZERS_SENTENCEPIECE_API_H_

// The table of functions libditserve_sentencepiece.so (sentencepiece_shim.cc)
// hands to SentencePieceModel. Debian's libsentencepiece exports the symbols
// of its bundled protobuf-lite; linked into a process that also loads
// libprotobuf (LibTorch, gRPC) the two copies interpose each other and the
// process crashes during static initialisation. So SentencePiece lives in
// this shim, which is dlopen'ed with RTLD_LOCAL | RTLD_DEEPBIND: its
// protobuf stays private. Both sides share the process's libstdc++, so
// standard types cross the boundary.

#include <string>
#include <vector>

namespace ditserve::tokenizers {

struct SentencePieceApi {
  // An opaque processor for a model file's bytes, or nullptr with `*error`
  // set. The bytes, not the path: SentencePiece reads files through
  // std::ifstream, and under RTLD_DEEPBIND the stream's locale facets can
  // bind to another copy of libstdc++'s than the process's (with a PyTorch
  // wheel's LibTorch on Ubuntu 24.04, loading by path crashed in
  // std::codecvt<>::do_unshift).
  void* (*load)(const std::string& serialized_model, std::string* error);
  void (*release)(void* processor);
  // False with `*error` set when SentencePiece rejects the input.
  bool (*encode)(const void* processor, const std::string& text,
                 std::vector<int>* ids, std::string* error);
  int (*piece_count)(const void* processor);
  // The unk id for an unknown piece.
  int (*piece_to_id)(const void* processor, const std::string& piece);
  // Empty for an id out of range.
  std::string (*id_to_piece)(const void* processor, int id);
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
