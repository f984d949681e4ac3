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
  // An opaque processor, or nullptr with `*error` set.
  void* (*load)(const std::string& path, std::string* error);
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
