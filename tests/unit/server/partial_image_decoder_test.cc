#include "server/partial_image_decoder.h"

#include <ATen/ATen.h>

#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/base/monotonic_clock.h"
#include "gtest/gtest.h"
#include "prometheus/metric_family.h"
#include "server/metrics.h"

namespace ditserve::server {
namespace {

constexpr char kModel[] = "flux-dev";

// The previews one job received, in the order it received them.
struct Received {
  absl::Mutex mutex;
  std::vector<v1::GenerateStreamResponse::PartialImage> previews;
};

// A request of `prompts` images that wants previews after `steps`.
std::shared_ptr<Job> MakeJob(int prompts, const std::vector<int>& steps,
                             Received& received) {
  v1::InputConfig config;
  for (int i = 0; i < prompts; ++i) config.add_prompt(absl::StrCat("p", i));
  config.mutable_partial_image_steps()->Add(steps.begin(), steps.end());
  return std::make_shared<Job>(
      std::move(config), "", base::MonotonicNow(), base::MonotonicNow(),
      [&received](v1::GenerateStreamResponse event) {
        absl::MutexLock lock(&received.mutex);
        received.previews.push_back(event.partial_image());
      },
      [](absl::StatusOr<v1::GenerateResponse>) {});
}

// One output per prompt (a row of `latents`), its bytes the row's first
// value as text: enough to tell which row and which step's latents each
// preview came from.
absl::StatusOr<std::vector<v1::Image>> EncodeRows(const v1::InputConfig&,
                                                  const at::Tensor& latents,
                                                  engine::StageTimings&) {
  std::vector<v1::Image> images;
  for (int64_t row = 0; row < latents.size(0); ++row) {
    v1::Image& image = images.emplace_back();
    image.set_prompt_index(static_cast<int>(row));
    image.set_data(absl::StrCat(latents[row][0].item<float>()));
  }
  return images;
}

double Sample(Metrics& metrics, const std::string& name,
              const std::string& result) {
  for (const prometheus::MetricFamily& family : metrics.registry().Collect()) {
    if (family.name != name) continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      bool matches = result.empty();
      for (const prometheus::ClientMetric::Label& label : metric.label) {
        matches = matches || (label.name == "result" && label.value == result);
      }
      if (!matches) continue;
      return family.type == prometheus::MetricType::Histogram
                 ? static_cast<double>(metric.histogram.sample_count)
                 : metric.counter.value;
    }
  }
  ADD_FAILURE() << "no series " << name << " result=" << result;
  return -1;
}

class PartialImageDecoderTest : public ::testing::Test {
 protected:
  PartialImageDecoderTest() {
    for (const int step : {2, 3, 4}) config_.add_partial_image_steps(step);
    jobs_ = {MakeJob(1, {2, 3, 4}, first_), MakeJob(2, {2, 3, 4}, second_)};
  }

  // Three prompts' latents whose rows start at base, base + 1, base + 2.
  static at::Tensor Latents(float base) {
    return at::arange(base, base + 3).unsqueeze(1).repeat({1, 4});
  }

  double Count(const std::string& result) {
    return Sample(metrics_, kPartialImagesMetric, result);
  }
  double Delays() { return Sample(metrics_, kPartialImageDelayMetric, ""); }

  Metrics metrics_{kModel, 1, BuildInfo{}};
  v1::InputConfig config_;
  Received first_;
  Received second_;
  std::vector<std::shared_ptr<Job>> jobs_;
  const std::vector<int> prompt_counts_ = {1, 2};
};

TEST_F(PartialImageDecoderTest, EachRequestGetsItsOutputsOfEachStepInOrder) {
  const OutputEncoder encode = EncodeRows;
  {
    PartialImageDecoder decoder(config_, jobs_, prompt_counts_, encode,
                                metrics_);
    decoder.Decode(2, Latents(10));
    decoder.Decode(4, Latents(20));
  }
  ASSERT_EQ(first_.previews.size(), 2U);
  EXPECT_EQ(first_.previews[0].step(), 2);
  EXPECT_EQ(first_.previews[0].partial_image_index(), 0);
  EXPECT_EQ(first_.previews[0].image().data(), "10");
  EXPECT_EQ(first_.previews[1].step(), 4);
  EXPECT_EQ(first_.previews[1].partial_image_index(), 2);
  EXPECT_EQ(first_.previews[1].image().data(), "20");
  EXPECT_EQ(first_.previews[1].total_bytes(), 2);

  // The second request's prompts are rows 1 and 2, its own 0 and 1.
  ASSERT_EQ(second_.previews.size(), 4U);
  const std::vector<std::string> data = {"11", "12", "21", "22"};
  for (size_t i = 0; i < data.size(); ++i) {
    EXPECT_EQ(second_.previews[i].image().data(), data[i]) << i;
    EXPECT_EQ(second_.previews[i].image().prompt_index(),
              static_cast<int>(i % 2))
        << i;
    EXPECT_EQ(second_.previews[i].partial_image_index(), i < 2 ? 0 : 2) << i;
  }
  EXPECT_EQ(Count(kPartialImageSent), 2);
  EXPECT_EQ(Count(kPartialImageFailed), 0);
  EXPECT_EQ(Count(kPartialImageSkipped), 0);
  EXPECT_EQ(Delays(), 2);
}

// Requests that share a run keep their own previews: the run's steps are
// the union of theirs, and each step decodes only the prompts of the
// requests that asked for it.
TEST_F(PartialImageDecoderTest, EachRequestGetsOnlyThePreviewsItAskedFor) {
  jobs_ = {MakeJob(1, {2, 4}, first_), MakeJob(2, {3}, second_)};
  std::vector<int> rows_decoded;
  const OutputEncoder encode = [&rows_decoded](const v1::InputConfig& config,
                                               const at::Tensor& latents,
                                               engine::StageTimings& timings) {
    EXPECT_EQ(config.prompt_size(), latents.size(0));
    rows_decoded.push_back(static_cast<int>(latents.size(0)));
    return EncodeRows(config, latents, timings);
  };
  {
    PartialImageDecoder decoder(config_, jobs_, prompt_counts_, encode,
                                metrics_);
    decoder.Decode(2, Latents(10));
    decoder.Decode(3, Latents(20));
    decoder.Decode(4, Latents(30));
  }
  EXPECT_EQ(rows_decoded, (std::vector<int>{1, 2, 1}));
  ASSERT_EQ(first_.previews.size(), 2U);
  EXPECT_EQ(first_.previews[0].step(), 2);
  EXPECT_EQ(first_.previews[0].partial_image_index(), 0);
  EXPECT_EQ(first_.previews[0].image().data(), "10");
  EXPECT_EQ(first_.previews[1].step(), 4);
  EXPECT_EQ(first_.previews[1].partial_image_index(), 1);
  EXPECT_EQ(first_.previews[1].image().data(), "30");
  ASSERT_EQ(second_.previews.size(), 2U);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(second_.previews[i].step(), 3);
    EXPECT_EQ(second_.previews[i].partial_image_index(), 0);
    EXPECT_EQ(second_.previews[i].image().prompt_index(), i);
    EXPECT_EQ(second_.previews[i].image().data(), absl::StrCat(21 + i));
  }
  EXPECT_EQ(Count(kPartialImageSent), 3);
}

// A preview is not the run's result: one that fails is counted and
// dropped, and the next one still goes out.
// A dp group that failed mid-run sends NaN latents for its prompts until the
// run ends; the run fails then, and no client gets a preview decoded from
// them.
TEST_F(PartialImageDecoderTest, LatentsThatAreNotFiniteAreNotDecoded) {
  int decoded = 0;
  const OutputEncoder encode = [&decoded](const v1::InputConfig& config,
                                          const at::Tensor& latents,
                                          engine::StageTimings& timings) {
    ++decoded;
    return EncodeRows(config, latents, timings);
  };
  at::Tensor latents = Latents(10);
  latents[2][1] = std::numeric_limits<float>::quiet_NaN();
  {
    PartialImageDecoder decoder(config_, jobs_, prompt_counts_, encode,
                                metrics_);
    decoder.Decode(2, latents);
  }
  EXPECT_EQ(decoded, 0);
  EXPECT_TRUE(first_.previews.empty());
  EXPECT_TRUE(second_.previews.empty());
  EXPECT_EQ(Count(kPartialImageFailed), 1);
  EXPECT_EQ(Count(kPartialImageSent), 0);
}

// An exception outside the encoder (here LibTorch's, from checking latents
// that are not a tensor; on a GPU, an error of the run surfacing there) is
// a failed preview, not one that ends the host from the preview's thread.
TEST_F(PartialImageDecoderTest, AnExceptionCheckingTheLatentsFailsThePreview) {
  const OutputEncoder encode = EncodeRows;
  PartialImageDecoder decoder(config_, jobs_, prompt_counts_, encode, metrics_);
  decoder.Decode(2, at::Tensor());
  decoder.Decode(3, Latents(10));
  decoder.Wait();
  EXPECT_EQ(Count(kPartialImageFailed), 1);
  EXPECT_EQ(Count(kPartialImageSent), 1);
}

TEST_F(PartialImageDecoderTest, AFailedPreviewIsCountedAndTheNextStillSent) {
  int calls = 0;
  const OutputEncoder encode = [&calls](const v1::InputConfig& config,
                                        const at::Tensor& latents,
                                        engine::StageTimings& timings)
      -> absl::StatusOr<std::vector<v1::Image>> {
    switch (++calls) {
      case 1:
        return absl::InternalError("the VAE ran out of memory");
      case 2:
        throw std::runtime_error("a LibTorch error");
      default:
        return EncodeRows(config, latents, timings);
    }
  };
  PartialImageDecoder decoder(config_, jobs_, prompt_counts_, encode, metrics_);
  decoder.Decode(2, Latents(10));
  decoder.Decode(3, Latents(15));
  decoder.Decode(4, Latents(20));
  decoder.Wait();
  ASSERT_EQ(first_.previews.size(), 1U);
  EXPECT_EQ(first_.previews[0].step(), 4);
  EXPECT_EQ(first_.previews[0].image().data(), "20");
  EXPECT_EQ(second_.previews.size(), 2U);
  EXPECT_EQ(Count(kPartialImageFailed), 2);
  EXPECT_EQ(Count(kPartialImageSent), 1);
  EXPECT_EQ(Delays(), 1);
}

// Outputs whose lengths do not fit the prompts are a failure, not a
// preview sent to the wrong request.
TEST_F(PartialImageDecoderTest, OutputsThatDoNotFitThePromptsFail) {
  const OutputEncoder encode = EncodeRows;
  PartialImageDecoder decoder(config_, jobs_, prompt_counts_, encode, metrics_);
  decoder.Decode(2, Latents(10).narrow(0, 0, 2));
  decoder.Wait();
  EXPECT_TRUE(first_.previews.empty());
  EXPECT_TRUE(second_.previews.empty());
  EXPECT_EQ(Count(kPartialImageFailed), 1);
}

// A finished request's rows are not decoded; once every request finished,
// nothing is.
TEST_F(PartialImageDecoderTest, FinishedRequestsPreviewsAreNotDecoded) {
  std::vector<int> rows_decoded;
  const OutputEncoder encode = [&rows_decoded](const v1::InputConfig& config,
                                               const at::Tensor& latents,
                                               engine::StageTimings& timings) {
    rows_decoded.push_back(static_cast<int>(latents.size(0)));
    return EncodeRows(config, latents, timings);
  };
  PartialImageDecoder decoder(config_, jobs_, prompt_counts_, encode, metrics_);
  jobs_[0]->Finish(absl::CancelledError("client went away"));
  decoder.Decode(2, Latents(10));
  decoder.Wait();
  EXPECT_EQ(rows_decoded, std::vector<int>{2}) << "the second request's rows";
  EXPECT_TRUE(first_.previews.empty());
  ASSERT_EQ(second_.previews.size(), 2U);
  EXPECT_EQ(second_.previews[1].image().data(), "12");

  jobs_[1]->Finish(absl::DeadlineExceededError("deadline"));
  decoder.Decode(4, Latents(20));
  decoder.Wait();
  EXPECT_EQ(rows_decoded.size(), 1U);
  EXPECT_EQ(second_.previews.size(), 2U);
  EXPECT_EQ(Count(kPartialImageSkipped), 1);
  EXPECT_EQ(Count(kPartialImageSent), 1);
}

}  // namespace
}  // namespace ditserve::server
