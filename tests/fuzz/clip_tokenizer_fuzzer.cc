// CLIPTokenizer (text cleaning, word regex, byte-level BPE) on arbitrary bytes,
// with the small golden tokenizer of tests/data/golden/tokenizers/clip_bpe.

#include <cstddef>
#include <cstdint>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/tokenizers/clip_tokenizer.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/tokenizer_properties.h"

namespace ditserve {
namespace {

// CLIP's model_max_length.
constexpr int kMaxLength = 77;

const tokenizers::CLIPTokenizer& Tokenizer() {
  static const tokenizers::CLIPTokenizer* tokenizer = [] {
    absl::StatusOr<tokenizers::CLIPTokenizer> loaded =
        tokenizers::CLIPTokenizer::Load(DITSERVE_TEST_DATA_DIR
                                        "/golden/tokenizers/clip_bpe");
    FUZZ_CHECK(loaded.ok(), "%s", loaded.status().ToString().c_str());
    return new tokenizers::CLIPTokenizer(*std::move(loaded));
  }();
  return *tokenizer;
}

}  // namespace
}  // namespace ditserve

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ditserve::fuzz::CheckTokenizer(
      ditserve::Tokenizer(),
      absl::string_view(reinterpret_cast<const char*>(data), size),
      ditserve::kMaxLength);
  return 0;
}
