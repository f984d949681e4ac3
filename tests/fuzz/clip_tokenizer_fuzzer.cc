// CLIPTokenizer (text cleaning, word regex, byte-level BPE) on arbitrary bytes,
// with the small golden tokenizer of tests/data/golden/tokenizers/clip_bpe.

#include <cstddef>
#include <cstdint>

#include "core/tokenizers/clip_tokenizer.h"
#include "tests/fuzz/tokenizer_properties.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // CLIP's model_max_length.
  constexpr int kMaxLength = 77;
  ditserve::fuzz::FuzzTokenizer<ditserve::tokenizers::CLIPTokenizer>(
      DITSERVE_TEST_DATA_DIR "/golden/tokenizers/clip_bpe", kMaxLength, data,
      size);
  return 0;
}
