#ifndef DITSERVE_TESTS_FUZZ_SCRATCH_DIR_H_
#define DITSERVE_TESTS_FUZZ_SCRATCH_DIR_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace ditserve::fuzz {

// A folder of this process, made once under $TMPDIR (or /tmp) and removed
// at exit, for parsers that read files: each input is written into it.
const std::string& ScratchDir();

// Writes `size` bytes to `path`, replacing it; aborts when it cannot, which
// is the machine's fault, not the input's.
void WriteFileOrDie(const std::string& path, const uint8_t* data, size_t size);

}  // namespace ditserve::fuzz

#endif  // DITSERVE_TESTS_FUZZ_SCRATCH_DIR_H_
