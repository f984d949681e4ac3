#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <stdexcept>

#include "core/models/layers/conv.h"
#include "core/models/layers/embedding.h"
#include "core/models/layers/linear.h"
#include "core/models/layers/parameter_init.h"

namespace ditserve::models {
namespace {

constexpr int64_t kSeed = 11;

void ExpectSameParameters(torch::nn::Module& ours, torch::nn::Module& torchs) {
  const auto expected = torchs.named_parameters();
  const auto actual = ours.named_parameters();
  ASSERT_EQ(actual.keys(), expected.keys());
  for (const auto& item : expected) {
    EXPECT_TRUE(torch::equal(actual[item.key()], item.value())) << item.key();
  }
}

// Builds one of ours and one of torch::nn's from the same seed.
template <typename Ours, typename Torchs, typename... Args>
std::pair<Ours, Torchs> BuildBoth(Args... args) {
  torch::manual_seed(kSeed);
  const RandomParameters drawn;
  Ours ours(args...);
  torch::manual_seed(kSeed);
  Torchs torchs(args...);
  return {ours, torchs};
}

TEST(WeightLayersTest, LinearDrawsAndComputesAsTorchsInARandomScope) {
  auto [ours, torchs] = BuildBoth<Linear, torch::nn::Linear>(6, 5);
  ExpectSameParameters(*ours, *torchs);
  const at::Tensor x = torch::randn({3, 6});
  EXPECT_TRUE(torch::equal(ours->forward(x), torchs->forward(x)));

  auto [no_bias, torchs_no_bias] = BuildBoth<Linear, torch::nn::Linear>(
      torch::nn::LinearOptions(6, 5).bias(false));
  ExpectSameParameters(*no_bias, *torchs_no_bias);
  EXPECT_FALSE(no_bias->bias.defined());
}

TEST(WeightLayersTest, ConvolutionsDrawAndComputeAsTorchsInARandomScope) {
  auto [conv2d, torchs2d] = BuildBoth<Conv2d, torch::nn::Conv2d>(
      torch::nn::Conv2dOptions(3, 4, 3).stride(2).padding(1));
  ExpectSameParameters(*conv2d, *torchs2d);
  const at::Tensor image = torch::randn({1, 3, 9, 7});
  EXPECT_TRUE(torch::equal(conv2d->forward(image), torchs2d->forward(image)));

  auto [conv3d, torchs3d] = BuildBoth<Conv3d, torch::nn::Conv3d>(
      torch::nn::Conv3dOptions(2, 3, 3).padding({0, 1, 1}).bias(false));
  ExpectSameParameters(*conv3d, *torchs3d);
  const at::Tensor video = torch::randn({1, 2, 4, 5, 6});
  EXPECT_TRUE(torch::equal(conv3d->forward(video), torchs3d->forward(video)));
}

TEST(WeightLayersTest, EmbeddingDrawsAndLooksUpAsTorchsInARandomScope) {
  auto [ours, torchs] = BuildBoth<Embedding, torch::nn::Embedding>(10, 4);
  ExpectSameParameters(*ours, *torchs);
  const at::Tensor ids = torch::tensor({{3, 0, 9}});
  EXPECT_TRUE(torch::equal(ours->forward(ids), torchs->forward(ids)));
}

TEST(WeightLayersTest, OutsideARandomScopeNothingIsDrawn) {
  torch::manual_seed(kSeed);
  const at::Tensor expected = torch::randn({8});
  torch::manual_seed(kSeed);
  Linear linear(16, 16);
  Conv2d conv(torch::nn::Conv2dOptions(4, 4, 3));
  Embedding embedding(16, 4);
  EXPECT_TRUE(torch::equal(torch::randn({8}), expected));
}

int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0;
  int64_t resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

TEST(WeightLayersTest, OutsideARandomScopeTheParametersTakeNoMemory) {
  const int64_t before = ResidentBytes();
  Linear linear(4096, 8192);  // 128 MiB of float32 weight
  const int64_t grown = ResidentBytes() - before;
  EXPECT_LT(grown, linear->weight.nbytes() / 8);
}

TEST(WeightLayersTest, ScopesNest) {
  EXPECT_FALSE(RandomParameters::Active());
  {
    const RandomParameters outer;
    {
      const RandomParameters inner;
      EXPECT_TRUE(RandomParameters::Active());
    }
    EXPECT_TRUE(RandomParameters::Active());
  }
  EXPECT_FALSE(RandomParameters::Active());
}

TEST(WeightLayersTest, ConvolutionRefusesPaddingItDoesNotImplement) {
  EXPECT_THROW(Conv2d(torch::nn::Conv2dOptions(2, 2, 3).padding(torch::kSame)),
               std::invalid_argument);
  EXPECT_THROW(
      Conv2d(torch::nn::Conv2dOptions(2, 2, 3).padding_mode(torch::kReflect)),
      std::invalid_argument);
}

}  // namespace
}  // namespace ditserve::models
