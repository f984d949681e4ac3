// T5Tokenizer (SentencePiece, through the shim) on arbitrary bytes, with the
// small golden tokenizer of tests/data/golden/tokenizers/t5_sp.

#include <cstddef>
#include <cstdint>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/tokenizers/t5_tokenizer.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/tokenizer_properties.h"

namespace ditserve {
namespace {

// FLUX.1-dev's max_sequence_length.
constexpr int kMaxLength = 512;

const tokenizers::T5Tokenizer& Tokenizer() {
  static const tokenizers::T5Tokenizer* tokenizer = [] {
    absl::StatusOr<tokenizers::T5Tokenizer> loaded =
        tokenizers::T5Tokenizer::Load(DITSERVE_TEST_DATA_DIR
                                      "/golden/tokenizers/t5_sp");
    FUZZ_CHECK(loaded.ok(), "%s", loaded.status().ToString().c_str());
    return new tokenizers::T5Tokenizer(*std::move(loaded));
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
