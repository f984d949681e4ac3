#include "core/base/allocator_tuning.h"

#include <malloc.h>
#include <stdlib.h>

#include <cstddef>
#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::base {
namespace {

using ::testing::HasSubstr;

// Bytes malloc holds in mmapped blocks right after allocating `size`.
size_t MappedWhileHolding(size_t size) {
  void* block = malloc(size);
  std::memset(block, 1, size);
  // Keeps the compiler from eliding the allocation.
  asm volatile("" : : "r"(block) : "memory");
  const size_t mapped = mallinfo2().hblkhd;
  free(block);
  return mapped;
}

// One test, since mallopt changes the whole process.
TEST(AllocatorTuningTest, LargeBlocksComeFromTheHeapUnlessTheEnvironmentTunes) {
#ifdef __SANITIZE_ADDRESS__
  GTEST_SKIP() << "AddressSanitizer's allocator replaces glibc's malloc, "
                  "which mallopt tunes";
#endif
  constexpr size_t kTensorBytes = size_t{64} << 20;
  ASSERT_GE(MappedWhileHolding(kTensorBytes), kTensorBytes)
      << "glibc's default should map a 64 MiB block";

  setenv("MALLOC_ARENA_MAX", "2", /*overwrite=*/1);
  EXPECT_THAT(KeepFreedMemoryForReuse(), HasSubstr("left as it is"));
  EXPECT_GE(MappedWhileHolding(kTensorBytes), kTensorBytes);
  unsetenv("MALLOC_ARENA_MAX");

  EXPECT_THAT(KeepFreedMemoryForReuse(), HasSubstr("keeps freed memory"));
  EXPECT_LT(MappedWhileHolding(kTensorBytes), kTensorBytes);
}

}  // namespace
}  // namespace ditserve::base
