#include "core/io/safetensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"

namespace ditserve::io {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           absl::StrCat(
               "safetensors_test_",
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string PathOf(const std::string& name) const {
    return (dir_ / name).string();
  }

  // Writes `length` as the header length followed by `header` and `data`.
  std::string WriteRaw(const std::string& name, uint64_t length,
                       const std::string& header, const std::string& data) {
    std::string path = PathOf(name);
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(&length), sizeof(length));
    out << header << data;
    return path;
  }
  std::string WriteRaw(const std::string& name, const std::string& header,
                       const std::string& data) {
    return WriteRaw(name, header.size(), header, data);
  }

  std::filesystem::path dir_;
};

TEST_F(SafetensorsTest, WriterRoundTripKeepsValuesDtypesShapesAndMetadata) {
  TensorMap tensors = {
      {"f32", torch::randn({2, 3})},
      {"f64", torch::randn({5}, torch::kFloat64)},
      {"bf16", torch::randn({3, 1}).to(torch::kBFloat16)},
      {"f16", torch::randn({1, 2, 2}).to(torch::kFloat16)},
      {"i64", torch::arange(7, torch::kInt64)},
      {"u8", torch::arange(3, torch::kUInt8)},
      {"scalar", torch::tensor(2.5)},
      {"empty", torch::empty({0, 4})},
      // A non-contiguous view is written as its logical values.
      {"transposed", torch::randn({3, 4}).t()}};
  std::string path = PathOf("round_trip.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, tensors, {{"format", "pt"}}).ok());

  auto file = SafetensorsFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->metadata().at("format"), "pt");
  EXPECT_EQ((*file)->tensors().size(), tensors.size());
  for (const auto& [name, expected] : tensors) {
    auto actual = (*file)->Tensor(name);
    ASSERT_TRUE(actual.ok()) << actual.status();
    EXPECT_EQ(actual->scalar_type(), expected.scalar_type()) << name;
    EXPECT_EQ(actual->sizes(), expected.sizes()) << name;
    EXPECT_TRUE(torch::equal(*actual, expected)) << name;
  }
}

TEST_F(SafetensorsTest, ReadAllTensorsReturnsEveryTensor) {
  TensorMap tensors = {{"a", torch::ones({2})}, {"b", torch::zeros({3, 3})}};
  std::string path = PathOf("all.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, tensors).ok());
  auto read = ReadAllTensors(path);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_TRUE(torch::equal(read->at("a"), tensors.at("a")));
  EXPECT_TRUE(torch::equal(read->at("b"), tensors.at("b")));
}

TEST_F(SafetensorsTest, AlignedTensorIsAViewThatOutlivesTheFileObject) {
  std::string path = PathOf("view.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, {{"w", torch::arange(16.0)}}).ok());
  at::Tensor view;
  {
    auto file = SafetensorsFile::Open(path);
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_GE((*file)->mapped_bytes(), 16 * sizeof(float));
    view = *(*file)->Tensor("w");
  }
  EXPECT_TRUE(torch::equal(view, torch::arange(16.0)));
}

TEST_F(SafetensorsTest, ReadAllTensorsReturnsWritableCopies) {
  std::string path = PathOf("copies.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, {{"w", torch::zeros({4})}}).ok());
  {
    auto tensors = ReadAllTensors(path);
    ASSERT_TRUE(tensors.ok()) << tensors.status();
    tensors->at("w").fill_(7.0);
  }
  auto again = ReadAllTensors(path);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(torch::equal(again->at("w"), torch::zeros({4})));
}

TEST_F(SafetensorsTest, UnalignedDataIsCopiedCorrectly) {
  // A 3-byte header puts the data at offset 11, unaligned for F32.
  const float values[2] = {1.5f, -2.0f};
  std::string header =
      R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  header.append((8 - (header.size() + 8) % 8) % 8 + 3, ' ');
  std::string path = WriteRaw(
      "unaligned.safetensors", header,
      std::string(reinterpret_cast<const char*>(values), sizeof(values)));
  auto file = SafetensorsFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  auto x = (*file)->Tensor("x");
  ASSERT_TRUE(x.ok()) << x.status();
  EXPECT_TRUE(torch::equal(*x, torch::tensor({1.5f, -2.0f})));
}

TEST_F(SafetensorsTest, MissingFileIsNotFound) {
  auto file = SafetensorsFile::Open(PathOf("absent.safetensors"));
  EXPECT_EQ(file.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(file.status().message(), HasSubstr("absent.safetensors"));
}

// Opening a FIFO for reading waited for a writer, for ever.
TEST_F(SafetensorsTest, AFifoIsRefusedNotWaitedOn) {
  ASSERT_EQ(::mkfifo(PathOf("fifo.safetensors").c_str(), 0600), 0);
  auto file = SafetensorsFile::Open(PathOf("fifo.safetensors"));
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(file.status().message(), HasSubstr("is not a regular file"));
}

TEST_F(SafetensorsTest, TruncatedFileIsAnError) {
  std::string path = PathOf("short.safetensors");
  std::ofstream(path, std::ios::binary) << "abc";
  auto file = SafetensorsFile::Open(path);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(file.status().message(),
              AllOf(HasSubstr(path), HasSubstr("truncated")));
}

TEST_F(SafetensorsTest, TruncatedDataIsAnErrorNamingTheTensor) {
  std::string path = WriteRaw(
      "cut.safetensors",
      R"({"weight":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})",
      std::string(8, '\0'));
  auto file = SafetensorsFile::Open(path);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(file.status().message(),
              AllOf(HasSubstr(path), HasSubstr("\"weight\""),
                    HasSubstr("outside the data section")));
}

TEST_F(SafetensorsTest, HeaderLengthPastEndOfFileIsAnError) {
  std::string path = WriteRaw("long_header.safetensors", 1000, "{}", "");
  auto file = SafetensorsFile::Open(path);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(file.status().message(),
              AllOf(HasSubstr(path), HasSubstr("header length 1000"),
                    HasSubstr("past the end")));
}

TEST_F(SafetensorsTest, HugeHeaderLengthIsAnErrorNotAnAllocation) {
  std::string path = WriteRaw("huge.safetensors", ~0ull, "{}", "");
  auto file = SafetensorsFile::Open(path);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(SafetensorsTest, BadJsonIsAnError) {
  std::string path = WriteRaw("bad.safetensors", R"({"x": {"dtype": )", "");
  auto file = SafetensorsFile::Open(path);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(file.status().message(),
              AllOf(HasSubstr(path), HasSubstr("not valid JSON")));
}

TEST_F(SafetensorsTest, HeaderThatIsNotAnObjectIsAnError) {
  std::string path = WriteRaw("array.safetensors", "[1, 2]", "");
  auto file = SafetensorsFile::Open(path);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(file.status().message(), HasSubstr("not a JSON object"));
}

TEST_F(SafetensorsTest, UnknownDtypeIsAnErrorNamingTheTensor) {
  std::string path = WriteRaw(
      "dtype.safetensors",
      R"({"proj.weight":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}})",
      std::string(2, '\0'));
  auto file = SafetensorsFile::Open(path);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(file.status().message(),
              AllOf(HasSubstr(path), HasSubstr("\"proj.weight\""),
                    HasSubstr("F8_E4M3")));
}

TEST_F(SafetensorsTest, MissingFieldIsAnErrorNamingTheTensor) {
  std::string path =
      WriteRaw("fields.safetensors", R"({"w":{"dtype":"F32","shape":[1]}})",
               std::string(4, '\0'));
  auto file = SafetensorsFile::Open(path);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(file.status().message(),
              AllOf(HasSubstr("\"w\""), HasSubstr("data_offsets")));
}

TEST_F(SafetensorsTest, NegativeDimensionIsAnError) {
  std::string path =
      WriteRaw("negative.safetensors",
               R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})",
               std::string(4, '\0'));
  auto file = SafetensorsFile::Open(path);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(file.status().message(),
              AllOf(HasSubstr("\"w\""), HasSubstr("shape")));
}

TEST_F(SafetensorsTest, ShapeThatDisagreesWithTheByteCountIsAnError) {
  std::string path =
      WriteRaw("shape.safetensors",
               R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})",
               std::string(8, '\0'));
  auto file = SafetensorsFile::Open(path);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(file.status().message(),
              AllOf(HasSubstr("\"w\""), HasSubstr("needs 12 bytes"),
                    HasSubstr("hold 8")));
}

TEST_F(SafetensorsTest, ShapeWhoseElementCountOverflowsIsAnError) {
  std::string path =
      WriteRaw("overflow.safetensors",
               R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,16],)"
               R"("data_offsets":[0,0]}})",
               "");
  auto file = SafetensorsFile::Open(path);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(file.status().message(), HasSubstr("\"w\""));
}

TEST_F(SafetensorsTest, OverlappingOffsetsAreAnErrorNamingBothTensors) {
  std::string path =
      WriteRaw("overlap.safetensors",
               R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
               R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
               std::string(12, '\0'));
  auto file = SafetensorsFile::Open(path);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(file.status().message(),
              AllOf(HasSubstr(path), HasSubstr("\"a\""), HasSubstr("\"b\""),
                    HasSubstr("overlaps")));
}

TEST_F(SafetensorsTest, OffsetsOutsideTheFileAreAnError) {
  std::string path =
      WriteRaw("outside.safetensors",
               R"({"w":{"dtype":"U8","shape":[4],"data_offsets":[100,104]}})",
               std::string(4, '\0'));
  auto file = SafetensorsFile::Open(path);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      file.status().message(),
      AllOf(HasSubstr("\"w\""), HasSubstr("[100, 104]"), HasSubstr("outside")));
}

TEST_F(SafetensorsTest, ReversedOffsetsAreAnError) {
  std::string path =
      WriteRaw("reversed.safetensors",
               R"({"w":{"dtype":"U8","shape":[0],"data_offsets":[4,0]}})",
               std::string(4, '\0'));
  auto file = SafetensorsFile::Open(path);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(file.status().message(), HasSubstr("\"w\""));
}

TEST_F(SafetensorsTest, NonStringMetadataIsAnError) {
  std::string path =
      WriteRaw("metadata.safetensors", R"({"__metadata__":{"n":1}})", "");
  auto file = SafetensorsFile::Open(path);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(file.status().message(), HasSubstr("__metadata__"));
}

TEST_F(SafetensorsTest, UnknownTensorNameIsNotFoundNamingFileAndTensor) {
  std::string path = PathOf("names.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, {{"present", torch::ones({1})}}).ok());
  auto file = SafetensorsFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE((*file)->Contains("present"));
  EXPECT_FALSE((*file)->Contains("absent"));
  auto tensor = (*file)->Tensor("absent");
  EXPECT_EQ(tensor.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(tensor.status().message(),
              AllOf(HasSubstr(path), HasSubstr("\"absent\"")));
}

TEST_F(SafetensorsTest, WriterRejectsTheReservedMetadataName) {
  auto status = WriteSafetensors(PathOf("reserved.safetensors"),
                                 {{"__metadata__", torch::ones({1})}});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(SafetensorsTest, WriterRejectsUnsupportedDtypes) {
  auto status =
      WriteSafetensors(PathOf("complex.safetensors"),
                       {{"c", torch::ones({1}, torch::kComplexFloat)}});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("\"c\""));
}

TEST_F(SafetensorsTest, ResidentBytesCountOnlyWhatWasRead) {
  constexpr int64_t kFloats = 1 << 20;  // 4 MiB per tensor.
  std::string path = PathOf("resident.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, {{"read", torch::ones({kFloats})},
                                      {"unread", torch::ones({kFloats})}})
                  .ok());
  auto file = SafetensorsFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  std::optional<uint64_t> before = (*file)->resident_bytes();
  ASSERT_TRUE(before.has_value());
  EXPECT_EQ((*file)->Tensor("read")->sum().item<double>(), kFloats);
  std::optional<uint64_t> after = (*file)->resident_bytes();
  ASSERT_TRUE(after.has_value());
  const uint64_t tensor_bytes = kFloats * sizeof(float);
  // The kernel maps some neighbouring pages on a fault, never the whole
  // unread tensor.
  EXPECT_GT(*after, *before);
  EXPECT_GE(*after, tensor_bytes);
  EXPECT_LT(*after, 2 * tensor_bytes);
}

TEST_F(SafetensorsTest, RandomCorruptionIsAnErrorOrReadableNeverACrash) {
  std::string path = PathOf("valid.safetensors");
  ASSERT_TRUE(WriteSafetensors(path,
                               {{"a", torch::randn({3, 5})},
                                {"b", torch::arange(9, torch::kInt64)},
                                {"c", torch::ones({2}, torch::kFloat16)}},
                               {{"format", "pt"}})
                  .ok());
  std::ifstream in(path, std::ios::binary);
  const std::string valid((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  std::mt19937 random(1234);
  for (int trial = 0; trial < 400; ++trial) {
    std::string bytes = valid;
    if (trial % 4 == 0) {
      bytes.resize(random() % bytes.size());
    } else {
      // Flip a few bytes, mostly in the length and the header.
      for (int flips = 1 + random() % 3; flips > 0; --flips) {
        const size_t limit = trial % 4 == 1 ? bytes.size() : 8 + 150;
        bytes[random() % std::min(limit, bytes.size())] =
            static_cast<char>(random());
      }
    }
    std::string corrupt = PathOf("corrupt.safetensors");
    std::ofstream(corrupt, std::ios::binary | std::ios::trunc) << bytes;
    auto file = SafetensorsFile::Open(corrupt);
    if (!file.ok()) {
      EXPECT_THAT(file.status().message(), HasSubstr(corrupt));
      continue;
    }
    for (const TensorInfo& info : (*file)->tensors()) {
      auto tensor = (*file)->Tensor(info.name);
      ASSERT_TRUE(tensor.ok()) << tensor.status();
      EXPECT_EQ(tensor->sizes(), c10::IntArrayRef(info.shape));
    }
  }
}

using CheckpointTensorsTest = SafetensorsTest;

TEST_F(CheckpointTensorsTest, OpensADiffusersComponentFolder) {
  ASSERT_TRUE(WriteSafetensors(PathOf("diffusion_pytorch_model.safetensors"),
                               {{"w", torch::ones({2})}})
                  .ok());
  auto checkpoint = CheckpointTensors::Open(dir_.string());
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  EXPECT_EQ(checkpoint->get()->path(),
            PathOf("diffusion_pytorch_model.safetensors"));
  EXPECT_EQ(checkpoint->get()->names(), std::vector<std::string>{"w"});
}

TEST_F(CheckpointTensorsTest, OpensATransformersComponentFolder) {
  ASSERT_TRUE(
      WriteSafetensors(PathOf("model.safetensors"), {{"w", torch::ones({2})}})
          .ok());
  auto checkpoint = CheckpointTensors::Open(dir_.string());
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  EXPECT_TRUE(checkpoint->get()->Contains("w"));
}

TEST_F(CheckpointTensorsTest, FolderWithoutWeightsIsNotFound) {
  auto checkpoint = CheckpointTensors::Open(dir_.string());
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(checkpoint.status().message(),
              AllOf(HasSubstr(dir_.string()), HasSubstr("model.safetensors")));
}

TEST_F(CheckpointTensorsTest, ShardedIndexJoinsEveryShard) {
  ASSERT_TRUE(WriteSafetensors(PathOf("model-00001-of-00002.safetensors"),
                               {{"a", torch::ones({2})}})
                  .ok());
  ASSERT_TRUE(WriteSafetensors(PathOf("model-00002-of-00002.safetensors"),
                               {{"b", torch::zeros({3})}})
                  .ok());
  std::ofstream(PathOf("model.safetensors.index.json"))
      << R"({"metadata": {"total_size": 20}, "weight_map": {)"
      << R"("a": "model-00001-of-00002.safetensors",)"
      << R"("b": "model-00002-of-00002.safetensors"}})";
  auto checkpoint = CheckpointTensors::Open(dir_.string());
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  const CheckpointTensors& tensors = **checkpoint;
  EXPECT_EQ(tensors.names(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(tensors.files().size(), 2u);
  EXPECT_EQ(tensors.mapped_bytes(), tensors.files()[0]->mapped_bytes() +
                                        tensors.files()[1]->mapped_bytes());
  EXPECT_TRUE(torch::equal(*tensors.Tensor("b"), torch::zeros({3})));
  EXPECT_EQ(tensors.Find("a")->shape, std::vector<int64_t>{2});
  EXPECT_EQ(tensors.Tensor("c").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(CheckpointTensorsTest, IndexPointingAtTheWrongShardIsAnError) {
  ASSERT_TRUE(
      WriteSafetensors(PathOf("s1.safetensors"), {{"a", torch::ones({2})}})
          .ok());
  std::ofstream(PathOf("model.safetensors.index.json"))
      << R"({"weight_map": {"a": "s1.safetensors", "b": "s1.safetensors"}})";
  auto checkpoint = CheckpointTensors::Open(dir_.string());
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(checkpoint.status().message(),
              AllOf(HasSubstr("\"b\""), HasSubstr("s1.safetensors")));
}

TEST_F(CheckpointTensorsTest, TensorStoredInTwoShardsIsAnError) {
  ASSERT_TRUE(
      WriteSafetensors(PathOf("s1.safetensors"), {{"a", torch::ones({2})}})
          .ok());
  ASSERT_TRUE(
      WriteSafetensors(PathOf("s2.safetensors"),
                       {{"a", torch::ones({2})}, {"b", torch::ones({1})}})
          .ok());
  std::ofstream(PathOf("model.safetensors.index.json"))
      << R"({"weight_map": {"a": "s1.safetensors", "b": "s2.safetensors"}})";
  auto checkpoint = CheckpointTensors::Open(dir_.string());
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(checkpoint.status().message(),
              AllOf(HasSubstr("\"a\""), HasSubstr("both")));
}

TEST_F(CheckpointTensorsTest, IndexWithoutWeightMapIsAnError) {
  std::ofstream(PathOf("model.safetensors.index.json"))
      << R"({"metadata": {}})";
  auto checkpoint = CheckpointTensors::Open(dir_.string());
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(checkpoint.status().message(), HasSubstr("weight_map"));
}

TEST_F(CheckpointTensorsTest, ShardOutsideTheIndexFolderIsAnError) {
  std::ofstream(PathOf("model.safetensors.index.json"))
      << R"({"weight_map": {"a": "../elsewhere.safetensors"}})";
  auto checkpoint = CheckpointTensors::Open(dir_.string());
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(checkpoint.status().message(), HasSubstr("elsewhere"));
}

TEST_F(CheckpointTensorsTest, BrokenShardErrorNamesTheShardFile) {
  std::ofstream(PathOf("s1.safetensors")) << "xy";
  std::ofstream(PathOf("model.safetensors.index.json"))
      << R"({"weight_map": {"a": "s1.safetensors"}})";
  auto checkpoint = CheckpointTensors::Open(dir_.string());
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(checkpoint.status().message(),
              HasSubstr(PathOf("s1.safetensors")));
}

}  // namespace
}  // namespace ditserve::io
