#include "core/engine/rank_report.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/dist/collective_failure.h"
#include "core/engine/rank_memory.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::engine {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(RankReportTest, SerialisedReportParsesBackToTheSameStatusAndTimings) {
  RankReport report;
  report.status = absl::CancelledError("client cancelled request r");
  report.timings.Add(Stage::kDenoise, 1.5);
  report.timings.Add(Stage::kTotal, 2.25);
  report.memory = {.resident_bytes = int64_t{3} << 40,
                   .peak_resident_bytes = int64_t{5} << 40,
                   .device_allocated_bytes = int64_t{7} << 30,
                   .device_peak_allocated_bytes = int64_t{11} << 30,
                   .device_reserved_bytes = int64_t{13} << 30};
  absl::StatusOr<RankReport> parsed =
      ParseRankReport(SerializeRankReport(report));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->status, report.status);
  EXPECT_DOUBLE_EQ(parsed->timings.seconds(Stage::kDenoise), 1.5);
  EXPECT_DOUBLE_EQ(parsed->timings.seconds(Stage::kTotal), 2.25);
  EXPECT_DOUBLE_EQ(parsed->timings.seconds(Stage::kQueue), 0.0);
  EXPECT_EQ(parsed->memory.resident_bytes, int64_t{3} << 40);
  EXPECT_EQ(parsed->memory.peak_resident_bytes, int64_t{5} << 40);
  EXPECT_EQ(parsed->memory.device_allocated_bytes, int64_t{7} << 30);
  EXPECT_EQ(parsed->memory.device_peak_allocated_bytes, int64_t{11} << 30);
  EXPECT_EQ(parsed->memory.device_reserved_bytes, int64_t{13} << 30);
}

// A failed collective's mark travels with the report: the ranks that read
// it re-form the group (RankLoop), whichever rank's collective failed.
TEST(RankReportTest, ACollectiveFailureStaysOneAcrossTheWire) {
  RankReport report;
  report.status = absl::CancelledError("client cancelled request r");
  absl::StatusOr<RankReport> parsed =
      ParseRankReport(SerializeRankReport(report));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(dist::IsCollectiveFailure(parsed->status));
  report.status = dist::MarkCollectiveFailure(absl::DeadlineExceededError(
      "all-to-all on the sp group did not complete within 1000 ms"));
  parsed = ParseRankReport(SerializeRankReport(report));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(dist::IsCollectiveFailure(parsed->status));
  EXPECT_EQ(parsed->status, report.status);
}

TEST(RankReportTest, ProcessMemoryIsReadFromTheKernel) {
  const base::ProcessMemory memory = base::ReadProcessMemory();
  EXPECT_GT(memory.resident_bytes, 0);
  EXPECT_GE(memory.peak_resident_bytes, memory.resident_bytes);
}

TEST(RankReportTest, ARankOnTheCpuReportsNoDeviceMemory) {
  const base::ProcessMemory memory = ReadRankMemory(c10::Device(c10::kCPU));
  EXPECT_GT(memory.resident_bytes, 0);
  EXPECT_EQ(memory.device_allocated_bytes, 0);
  EXPECT_EQ(memory.device_reserved_bytes, 0);
  EXPECT_THAT(DescribeRankMemory(memory), Not(HasSubstr("GPU")));
}

TEST(RankReportTest, TheStartUpLineNamesGpuMemoryWhenThereIsSome) {
  const base::ProcessMemory memory = {
      .resident_bytes = int64_t{300} << 20,
      .peak_resident_bytes = int64_t{400} << 20,
      .device_allocated_bytes = int64_t{24000} << 20,
      .device_peak_allocated_bytes = int64_t{25000} << 20,
      .device_reserved_bytes = int64_t{26000} << 20};
  EXPECT_EQ(DescribeRankMemory(memory),
            "300 MiB resident (peak 400 MiB), 24000 MiB allocated on the GPU "
            "(peak 25000 MiB), 26000 MiB reserved");
}

TEST(RankReportTest, MalformedReportIsAnError) {
  absl::StatusOr<RankReport> parsed = ParseRankReport("{\"code\": 0}");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInternal);
}

TEST(RankReportTest, AllOkReportsCombineToOk) {
  EXPECT_TRUE(CombineRankStatuses({{}, {}, {}}).ok());
}

TEST(RankReportTest, FailuresNameEachRankAndTakeTheLowestRanksCode) {
  std::vector<RankReport> reports(4);
  reports[1].status = absl::InternalError("size mismatch");
  reports[2].status = absl::CancelledError("stopped");
  reports[3].status = absl::CancelledError("stopped");
  absl::Status combined = CombineRankStatuses(reports);
  EXPECT_EQ(combined.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(combined.message()),
              HasSubstr("rank 1: INTERNAL: size mismatch; ranks 2, 3: "
                        "CANCELLED: stopped"));
}

TEST(RankReportTest, RanksStoppedForAnothersFailureDoNotSetTheCode) {
  std::vector<RankReport> reports(4);
  reports[0].status = absl::AbortedError("a dp group failed");
  reports[1].status = absl::AbortedError("a dp group failed");
  reports[2].status = absl::ResourceExhaustedError("out of memory");
  reports[3].status = absl::InternalError("out of memory too");
  absl::Status combined = CombineRankStatuses(reports);
  EXPECT_EQ(combined.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(combined.message()),
              HasSubstr("ranks 0, 1: ABORTED: a dp group failed; rank 2: "
                        "RESOURCE_EXHAUSTED: out of memory; rank 3: INTERNAL"));
}

}  // namespace
}  // namespace ditserve::engine
