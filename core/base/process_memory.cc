#include "core/base/process_memory.h"

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace ditserve::base {
namespace {

// "VmRSS:\t  123456 kB" -> 123456 * 1024.
int64_t KilobytesField(absl::string_view line) {
  const std::vector<absl::string_view> words =
      absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  int64_t kilobytes = 0;
  if (words.size() < 2 || !absl::SimpleAtoi(words[1], &kilobytes)) return 0;
  return kilobytes * 1024;
}

}  // namespace

ProcessMemory ReadProcessMemory() {
  ProcessMemory memory;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (absl::StartsWith(line, "VmRSS:")) {
      memory.resident_bytes = KilobytesField(line);
    } else if (absl::StartsWith(line, "VmHWM:")) {
      memory.peak_resident_bytes = KilobytesField(line);
    }
  }
  return memory;
}

}  // namespace ditserve::base
