#include "core/base/allocator_tuning.h"

#include <malloc.h>
#include <stdlib.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <thread>

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

// MappedWhileHolding on a thread of its own, which glibc gives an arena of
// its own unless told otherwise.
size_t MappedWhileAnotherThreadHolds(size_t size) {
  size_t mapped = 0;
  std::thread([&mapped, size] { mapped = MappedWhileHolding(size); }).join();
  return mapped;
}

// One test, since mallopt changes the whole process. No thread allocates
// before the tuning: the arena it made would be reused by the next thread.
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
  // The host computes on its scheduler thread, not on the main one.
  EXPECT_LT(MappedWhileAnotherThreadHolds(kTensorBytes), kTensorBytes);
}

}  // namespace
}  // namespace ditserve::base
