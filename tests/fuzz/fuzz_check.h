#ifndef DITSERVE_TESTS_FUZZ_FUZZ_CHECK_H_
#define DITSERVE_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

// A property every input must keep: when it does not, print what broke and
// abort, which libFuzzer reports as a crash and saves the input.
#define FUZZ_CHECK(condition, ...)                                 \
  do {                                                             \
    if (!(condition)) {                                            \
      std::fprintf(stderr, "FUZZ_CHECK failed: %s: ", #condition); \
      std::fprintf(stderr, __VA_ARGS__);                           \
      std::fprintf(stderr, "\n");                                  \
      std::abort();                                                \
    }                                                              \
  } while (false)

#endif  // DITSERVE_TESTS_FUZZ_FUZZ_CHECK_H_
