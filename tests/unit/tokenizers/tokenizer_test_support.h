#ifndef DITSERVE_TESTS_UNIT_TOKENIZERS_TOKENIZER_TEST_SUPPORT_H_
#define DITSERVE_TESTS_UNIT_TOKENIZERS_TOKENIZER_TEST_SUPPORT_H_

// Golden tokenizer folders copied from shared/golden into tests/data, and
// scratch folders for tokenizers built from broken or modified files.

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace ditserve::tokenizers::testing {

inline std::string GoldenTokenizerDir(const std::string& name) {
  return std::string(DITSERVE_TEST_DATA_DIR) + "/golden/tokenizers/" + name;
}

inline nlohmann::json ReadGoldenCase(const std::string& name) {
  std::ifstream in(GoldenTokenizerDir(name) + "/case.json");
  EXPECT_TRUE(in.good()) << "missing golden case " << name;
  return nlohmann::json::parse(in);
}

// A fresh folder under the test's temporary directory, removed on
// destruction.
class ScratchDir {
 public:
  ScratchDir() {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string pattern =
        (std::filesystem::path(base != nullptr ? base : "/tmp") /
         "ditserve_tokenizer_XXXXXX")
            .string();
    if (const char* made = ::mkdtemp(pattern.data()); made != nullptr) {
      path_ = made;
    }
    EXPECT_FALSE(path_.empty()) << "mkdtemp failed for " << pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }

  std::string CopyFrom(const std::string& dir, const std::string& file) const {
    const std::string target = path_ + "/" + file;
    std::filesystem::copy_file(
        dir + "/" + file, target,
        std::filesystem::copy_options::overwrite_existing);
    std::filesystem::permissions(target,
                                 std::filesystem::perms::owner_read |
                                     std::filesystem::perms::owner_write);
    return target;
  }

  void Write(const std::string& file, const std::string& content) const {
    std::ofstream out(path_ + "/" + file, std::ios::binary | std::ios::trunc);
    out << content;
  }

 private:
  std::string path_;
};

}  // namespace ditserve::tokenizers::testing

#endif  // DITSERVE_TESTS_UNIT_TOKENIZERS_TOKENIZER_TEST_SUPPORT_H_
