#ifndef DITSERVE_TESTS_UNIT_CHECKPOINTS_CHECKPOINT_FOLDER_TEST_H_
#define DITSERVE_TESTS_UNIT_CHECKPOINTS_CHECKPOINT_FOLDER_TEST_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/checkpoints/write_checkpoint.h"

namespace ditserve::checkpoints {

// A fresh folder per test, removed afterwards, to write checkpoints into.
class CheckpointFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::path(::testing::TempDir()) /
            (std::string("checkpoint_test_") +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  // A tiny checkpoint of `family` in root_/`name`.
  std::string WriteTiny(config::ModelFamily family, uint64_t seed,
                        const std::string& name) {
    const std::string dir = (root_ / name).string();
    const absl::Status status =
        WriteCheckpoint(family, CheckpointPreset::kTiny, seed, dir);
    EXPECT_TRUE(status.ok()) << status;
    return dir;
  }

  static std::string Bytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }

  std::filesystem::path root_;
};

}  // namespace ditserve::checkpoints

#endif  // DITSERVE_TESTS_UNIT_CHECKPOINTS_CHECKPOINT_FOLDER_TEST_H_
