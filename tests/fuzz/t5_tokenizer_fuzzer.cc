// T5Tokenizer (SentencePiece, through the shim) on arbitrary bytes, with the
// small golden tokenizer of tests/data/golden/tokenizers/t5_sp.

#include <cstddef>
#include <cstdint>

#include "core/tokenizers/t5_tokenizer.h"
#include "tests/fuzz/tokenizer_properties.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // FLUX.1-dev's max_sequence_length.
  constexpr int kMaxLength = 512;
  ditserve::fuzz::FuzzTokenizer<ditserve::tokenizers::T5Tokenizer>(
      DITSERVE_TEST_DATA_DIR "/golden/tokenizers/t5_sp", kMaxLength, data,
      size);
  return 0;
}
