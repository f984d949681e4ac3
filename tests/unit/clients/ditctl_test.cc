#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "clients/ditctl/append_slice.h"
#include "clients/ditctl/chunked_outputs.h"
#include "clients/ditctl/connection_flags.h"
#include "clients/ditctl/error_messages.h"
#include "clients/ditctl/output_files.h"
#include "clients/ditctl/progress_bar.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::ditctl {
namespace {

using ::testing::HasSubstr;

TEST(ConnectionFlagsTest, TakesATimeoutInRangeAndTlsWithItsAuthority) {
  EXPECT_TRUE(CheckConnectionFlags({.timeout_seconds = 600}).ok());
  EXPECT_TRUE(CheckConnectionFlags({.timeout_seconds = 1e6,
                                    .tls_ca = "ca.pem",
                                    .tls_client_cert = "c.pem",
                                    .tls_client_key = "k.pem"})
                  .ok());
}

// inf and 1e16 seconds overflowed the deadline's arithmetic; 0 failed every
// call at once, advising a larger --timeout.
TEST(ConnectionFlagsTest, RefusesATimeoutOutOfRangeNamingIt) {
  for (const double seconds :
       {0.0, -1.0, 1e16, std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::quiet_NaN()}) {
    const absl::Status checked =
        CheckConnectionFlags({.timeout_seconds = seconds});
    EXPECT_EQ(checked.code(), absl::StatusCode::kInvalidArgument) << seconds;
    EXPECT_THAT(std::string(checked.message()),
                HasSubstr("allowed above 0 and at most 1000000 seconds"))
        << seconds;
  }
}

TEST(ConnectionFlagsTest, TakesNoKeepaliveOrOneAHostAccepts) {
  EXPECT_TRUE(CheckConnectionFlags({.timeout_seconds = 1}).ok());
  EXPECT_TRUE(CheckConnectionFlags({.timeout_seconds = 1,
                                    .keepalive_seconds = 10,
                                    .keepalive_timeout_seconds = 0.001})
                  .ok());
  for (const double seconds : {5.0, -1.0, 2e6}) {
    EXPECT_THAT(
        std::string(CheckConnectionFlags({.timeout_seconds = 1,
                                          .keepalive_seconds = seconds,
                                          .keepalive_timeout_seconds = 20})
                        .message()),
        HasSubstr(absl::StrCat("--keepalive ", seconds,
                               ": allowed 0 (no pings), or 10 to")));
  }
  EXPECT_THAT(std::string(CheckConnectionFlags(
                              {.timeout_seconds = 1, .keepalive_seconds = 10})
                              .message()),
              HasSubstr("--keepalive_timeout 0: allowed 0.001 to 1000000"));
}

// Without --tls_ca the channel was plaintext, certificate and token with it.
TEST(ConnectionFlagsTest, RefusesAClientCertificateWithoutTheRestOfTls) {
  EXPECT_THAT(std::string(CheckConnectionFlags({.timeout_seconds = 1,
                                                .tls_client_cert = "c.pem",
                                                .tls_client_key = "k.pem"})
                              .message()),
              HasSubstr("--tls_client_cert needs --tls_ca"));
  EXPECT_THAT(std::string(CheckConnectionFlags({.timeout_seconds = 1,
                                                .tls_ca = "ca.pem",
                                                .tls_client_cert = "c.pem"})
                              .message()),
              HasSubstr("--tls_client_cert and --tls_client_key go together"));
}

TEST(ProgressBarTest, FillsInProportionToSteps) {
  EXPECT_EQ(RenderProgress(0, 4, 0.0, 8), "[........] 0/4 steps    0.0 s");
  EXPECT_EQ(RenderProgress(2, 4, 1.25, 8), "[####....] 2/4 steps    1.2 s");
  EXPECT_EQ(RenderProgress(28, 28, 3.0, 4), "[####] 28/28 steps    3.0 s");
}

TEST(ProgressBarTest, ClampsStepsOutsideTheRange) {
  EXPECT_EQ(RenderProgress(9, 4, 0.0, 4), "[####] 4/4 steps    0.0 s");
}

TEST(AppendSliceTest, JoinsInOrderSlicesAndSaysWhenComplete) {
  std::string whole;
  absl::StatusOr<bool> complete = AppendSlice("preview 0", 0, 5, "abc", whole);
  ASSERT_TRUE(complete.ok()) << complete.status();
  EXPECT_FALSE(*complete);
  complete = AppendSlice("preview 0", 3, 5, "de", whole);
  ASSERT_TRUE(complete.ok()) << complete.status();
  EXPECT_TRUE(*complete);
  EXPECT_EQ(whole, "abcde");
}

TEST(AppendSliceTest, AnEmptyItemIsCompleteAtOnce) {
  std::string whole;
  absl::StatusOr<bool> complete = AppendSlice("image 0", 0, 0, "", whole);
  ASSERT_TRUE(complete.ok()) << complete.status();
  EXPECT_TRUE(*complete);
}

TEST(AppendSliceTest, RefusesAGapAnOverlapAndBytesPastTheTotal) {
  std::string whole = "abc";
  absl::StatusOr<bool> gap = AppendSlice("preview 1", 4, 6, "ef", whole);
  EXPECT_EQ(gap.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(gap.status().message(),
              HasSubstr("preview 1: a slice at 4, expected 3"));
  EXPECT_FALSE(AppendSlice("preview 1", 2, 6, "cd", whole).ok());
  absl::StatusOr<bool> past = AppendSlice("preview 1", 3, 5, "def", whole);
  EXPECT_THAT(past.status().message(), HasSubstr("6 bytes past total_bytes 5"));
  EXPECT_EQ(whole, "abc")
      << "a refused slice must leave the bytes as they were";
}

v1::GenerateStreamResponse::ImageChunk Chunk(int image_index, int64_t offset,
                                             int64_t total_bytes,
                                             const std::string& data) {
  v1::GenerateStreamResponse::ImageChunk chunk;
  chunk.set_image_index(image_index);
  chunk.set_offset(offset);
  chunk.set_total_bytes(total_bytes);
  chunk.set_data(data);
  return chunk;
}

// A result whose outputs carry `data`, "" for one sent in chunks.
v1::GenerateResponse ResultOf(std::initializer_list<std::string> data) {
  v1::GenerateResponse result;
  for (const std::string& one : data) result.add_images()->set_data(one);
  return result;
}

TEST(ChunkedOutputsTest, TakesChunksForEmptyDataAndTheResultsOwnOtherwise) {
  ChunkedOutputs chunked;
  ASSERT_TRUE(chunked.Add(Chunk(0, 0, 5, "abc")).ok());
  ASSERT_TRUE(chunked.Add(Chunk(0, 3, 5, "de")).ok());
  const v1::GenerateResponse result = ResultOf({"", "xy"});
  EXPECT_EQ(*chunked.Data(result, 0), "abcde");
  EXPECT_EQ(*chunked.Data(result, 1), "xy");
}

// The stream ended, OK, after the first of an MP4's chunks: ditctl wrote
// the cut-short file and exited 0.
TEST(ChunkedOutputsTest, RefusesAnOutputWhoseChunksStoppedShort) {
  ChunkedOutputs chunked;
  ASSERT_TRUE(chunked.Add(Chunk(0, 0, 5, "abc")).ok());
  const absl::StatusOr<absl::string_view> data =
      chunked.Data(ResultOf({""}), 0);
  EXPECT_EQ(data.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(data.status().message(),
              HasSubstr("output 0: 3 of its 5 bytes came in image_chunks"));
}

// Chunks for output 1 only: output 0 was written as an empty file.
TEST(ChunkedOutputsTest, RefusesAnOutputThatCameNowhereOrTwice) {
  ChunkedOutputs chunked;
  ASSERT_TRUE(chunked.Add(Chunk(1, 0, 2, "ab")).ok());
  EXPECT_THAT(chunked.Data(ResultOf({"", ""}), 0).status().message(),
              HasSubstr("output 0: no data came"));
  EXPECT_THAT(chunked.Data(ResultOf({"", "ab"}), 1).status().message(),
              HasSubstr("output 1: data came both in the result and in "
                        "image_chunks"));
}

TEST(ChunkedOutputsTest, RefusesADuplicateChunkAndATotalThatMoves) {
  ChunkedOutputs chunked;
  ASSERT_TRUE(chunked.Add(Chunk(0, 0, 5, "abc")).ok());
  const absl::Status duplicate = chunked.Add(Chunk(0, 0, 5, "abc"));
  EXPECT_EQ(duplicate.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(duplicate.message(),
              HasSubstr("output 0: a slice at 0, expected 3"));
  EXPECT_THAT(chunked.Add(Chunk(0, 3, 3, "")).message(),
              HasSubstr("output 0: a chunk of total_bytes 3 after ones of 5"));
  EXPECT_FALSE(chunked.Data(ResultOf({""}), 0).ok())
      << "a refused chunk must not complete the output";
}

TEST(OutputFilesTest, TheFormatFollowsTheExtensionInAnyCase) {
  EXPECT_EQ(*ParseOutputFormat("", "fox.JPG"), v1::OUTPUT_FORMAT_JPEG);
  EXPECT_EQ(*ParseOutputFormat("", "clip.Mp4"), v1::OUTPUT_FORMAT_MP4);
  EXPECT_EQ(*ParseOutputFormat("", "fox.webp"), v1::OUTPUT_FORMAT_WEBP);
  EXPECT_EQ(*ParseOutputFormat("", "fox.tiff"), v1::OUTPUT_FORMAT_PNG);
  EXPECT_EQ(*ParseOutputFormat("", ""), v1::OUTPUT_FORMAT_PNG);
  EXPECT_EQ(*ParseOutputFormat("RGB8", "fox.rgb"), v1::OUTPUT_FORMAT_RGB8);
  EXPECT_EQ(*ParseOutputFormat("png", "waves.PNG"), v1::OUTPUT_FORMAT_PNG);
  EXPECT_THAT(ParseOutputFormat("gif", "").status().message(),
              HasSubstr("--format gif is unknown"));
}

// Data the extension would misname is refused before anything runs.
TEST(OutputFilesTest, AFormatTheFileNameContradictsIsRefused) {
  EXPECT_THAT(ParseOutputFormat("rgb8", "fox.png").status().message(),
              HasSubstr("-o fox.png names another format than --format rgb8"));
  EXPECT_FALSE(ParseOutputFormat("png", "waves.mp4").ok());
}

// Without -o, raw bytes do not land in a file named as an image.
TEST(OutputFilesTest, TheDefaultFileIsNamedForItsFormat) {
  EXPECT_EQ(DefaultOutputPath(v1::OUTPUT_FORMAT_PNG), "out.png");
  EXPECT_EQ(DefaultOutputPath(v1::OUTPUT_FORMAT_JPEG), "out.jpg");
  EXPECT_EQ(DefaultOutputPath(v1::OUTPUT_FORMAT_MP4), "out.mp4");
  EXPECT_EQ(DefaultOutputPath(v1::OUTPUT_FORMAT_RGB8), "out.rgb");
  EXPECT_EQ(DefaultOutputPath(v1::OUTPUT_FORMAT_LATENT_F32), "out.f32");
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A fresh folder of this test's own under the test temporary folder.
std::filesystem::path FreshFolder() {
  const std::filesystem::path folder =
      std::filesystem::path(::testing::TempDir()) /
      ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  return folder;
}

TEST(OutputFilesTest, AnOutputIsWrittenWholeOverTheFileThatWasThere) {
  const std::filesystem::path path = FreshFolder() / "fox.png";
  std::ofstream(path) << "an older fox";
  ASSERT_TRUE(WriteOutputFile(path.string(), "fox").ok());
  EXPECT_EQ(ReadFile(path), "fox");
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".part"));
}

// Whatever stops the write (here the partial file cannot be made; on a user's
// machine a full disk), the file that was there stays as it was.
TEST(OutputFilesTest, AFailedWriteLeavesTheFileThatWasThere) {
  const std::filesystem::path path = FreshFolder() / "fox.png";
  std::ofstream(path) << "an older fox";
  std::filesystem::create_directories(path.string() + ".part/blocked");
  const absl::Status written = WriteOutputFile(path.string(), "fox");
  EXPECT_EQ(written.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(written.message(),
              HasSubstr("cannot write " + path.string() + ": Is a directory"));
  EXPECT_EQ(ReadFile(path), "an older fox");
}

// -o is checked before the request is sent: a generation is not run for
// outputs that could not be kept.
TEST(OutputFilesTest, AnOutputPathThatCannotBeWrittenIsRefusedNamingIt) {
  const std::filesystem::path folder = FreshFolder();
  EXPECT_TRUE(CheckOutputPath((folder / "fox.png").string()).ok());
  EXPECT_TRUE(CheckOutputPath("fox.png").ok()) << "the working folder";
  EXPECT_TRUE(CheckOutputPath("/dev/null").ok()) << "a device, written to";
  const absl::Status into_folder = CheckOutputPath(folder.string());
  EXPECT_EQ(into_folder.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      into_folder.message(),
      absl::StrCat("-o ", folder.string(), ": is a folder; name a file in it"));
  const std::string missing = (folder / "no_such_folder" / "fox.png").string();
  EXPECT_EQ(
      CheckOutputPath(missing).message(),
      absl::StrCat("-o ", missing, ": its folder ",
                   (folder / "no_such_folder").string(), " does not exist"));
}

// -o link.png writes the file the link names; the link stays a link.
TEST(OutputFilesTest, ALinkIsWrittenThroughNotReplaced) {
  const std::filesystem::path folder = FreshFolder();
  std::ofstream(folder / "fox.png") << "an older fox";
  std::filesystem::create_symlink("fox.png", folder / "latest.png");
  ASSERT_TRUE(WriteOutputFile((folder / "latest.png").string(), "fox").ok());
  EXPECT_TRUE(std::filesystem::is_symlink(folder / "latest.png"));
  EXPECT_EQ(ReadFile(folder / "fox.png"), "fox");
}

TEST(ErrorMessagesTest, NamesCodeAdviceAndServerMessage) {
  const std::string text = DescribeError(
      grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "queue is full"),
      "host:1");
  EXPECT_THAT(text, HasSubstr("RESOURCE_EXHAUSTED from host:1"));
  EXPECT_THAT(text, HasSubstr("retry later"));
  EXPECT_THAT(text, HasSubstr("Server said: queue is full"));
}

TEST(ErrorMessagesTest, EveryFailureCodeHasSpecificAdvice) {
  for (const grpc::StatusCode code :
       {grpc::StatusCode::INVALID_ARGUMENT, grpc::StatusCode::NOT_FOUND,
        grpc::StatusCode::FAILED_PRECONDITION,
        grpc::StatusCode::RESOURCE_EXHAUSTED, grpc::StatusCode::UNAVAILABLE,
        grpc::StatusCode::DEADLINE_EXCEEDED, grpc::StatusCode::CANCELLED,
        grpc::StatusCode::INTERNAL, grpc::StatusCode::UNIMPLEMENTED}) {
    EXPECT_THAT(DescribeError(grpc::Status(code, "m"), "h"),
                ::testing::Not(HasSubstr("the call failed")))
        << code;
  }
}

}  // namespace
}  // namespace ditserve::ditctl
