#include "server/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/process_memory.h"
#include "prometheus/metric_family.h"

namespace ditserve::server {
namespace {

using ::testing::UnorderedElementsAre;

// The `kind` of each ditserve_rank_memory_bytes series of `rank`.
std::vector<std::string> MemoryKinds(Metrics& metrics,
                                     const std::string& rank) {
  std::vector<std::string> kinds;
  for (const prometheus::MetricFamily& family : metrics.registry().Collect()) {
    if (family.name != kRankMemoryMetric) continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      std::string kind;
      bool of_rank = false;
      for (const prometheus::ClientMetric::Label& label : metric.label) {
        if (label.name == "kind") kind = label.value;
        if (label.name == "rank") of_rank = label.value == rank;
      }
      if (of_rank) kinds.push_back(kind);
    }
  }
  return kinds;
}

class MetricsRankMemoryTest : public ::testing::Test {
 protected:
  Metrics metrics_{"flux-dev", 2, {"0.1.0", "2.11.0", "cuda", "bfloat16"}};
  const base::ProcessMemory gpu_read_ = {.resident_bytes = 3 << 20,
                                         .peak_resident_bytes = 4 << 20,
                                         .device_allocated_bytes = 5 << 20,
                                         .device_peak_allocated_bytes = 6 << 20,
                                         .device_reserved_bytes = 7 << 20};
};

TEST_F(MetricsRankMemoryTest, AGpuRankReportsItsDeviceToo) {
  metrics_.SetRankMemory(1, gpu_read_);
  EXPECT_THAT(
      MemoryKinds(metrics_, "1"),
      UnorderedElementsAre("resident", "peak_resident", "device_allocated",
                           "device_peak_allocated", "device_reserved"));
}

TEST_F(MetricsRankMemoryTest, AFailedDeviceReadDropsTheDeviceSeries) {
  metrics_.SetRankMemory(0, gpu_read_);
  metrics_.SetRankMemory(1, gpu_read_);
  base::ProcessMemory failed_read = gpu_read_;
  failed_read.device_allocated_bytes = 0;
  failed_read.device_peak_allocated_bytes = 0;
  failed_read.device_reserved_bytes = 0;

  metrics_.SetRankMemory(1, failed_read);

  EXPECT_THAT(MemoryKinds(metrics_, "1"),
              UnorderedElementsAre("resident", "peak_resident"));
  EXPECT_EQ(MemoryKinds(metrics_, "0").size(), 5u) << "another rank's stay";
  metrics_.SetRankMemory(1, gpu_read_);
  EXPECT_EQ(MemoryKinds(metrics_, "1").size(), 5u) << "back at the next read";
}

TEST_F(MetricsRankMemoryTest, ACpuRankHasNoDeviceSeries) {
  metrics_.SetRankMemory(
      0, {.resident_bytes = 1 << 20, .peak_resident_bytes = 2 << 20});
  EXPECT_THAT(MemoryKinds(metrics_, "0"),
              UnorderedElementsAre("resident", "peak_resident"));
}

}  // namespace
}  // namespace ditserve::server
