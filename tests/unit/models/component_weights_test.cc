#include "core/models/component_weights.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <string>

#include "core/io/safetensors.h"
#include "core/models/layers/linear.h"

namespace ditserve::models {
namespace {

using ::testing::HasSubstr;

// A Linear and a buffer, as the families' modules hold them.
struct ProjectionWithTable : torch::nn::Module {
  ProjectionWithTable()
      : proj(register_module("proj", Linear(3, 2))),
        table(register_buffer("table", torch::zeros({4}))) {}

  Linear proj;
  at::Tensor table;
};

io::TensorMap Weights() {
  return {{"proj.weight", torch::arange(6, torch::kFloat).view({2, 3}) / 7},
          {"proj.bias", torch::tensor({0.25F, -0.5F})},
          {"table", torch::arange(4, torch::kFloat) / 3}};
}

class ComponentWeightsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const io::TensorMap& weights) {
    EXPECT_TRUE(
        io::WriteSafetensors(
            (dir_ / "diffusion_pytorch_model.safetensors").string(), weights)
            .ok());
    return dir_.string();
  }

  std::filesystem::path dir_;
};

TEST_F(ComponentWeightsTest, PlaceUnwrittenGivesEveryTensorNewStorageThere) {
  ProjectionWithTable module;
  const void* before = module.table.data_ptr();
  PlaceUnwritten(module, {.dtype = at::kBFloat16});
  for (const auto& item : module.named_parameters()) {
    EXPECT_EQ(item.value().scalar_type(), at::kBFloat16) << item.key();
  }
  EXPECT_EQ(module.table.scalar_type(), at::kBFloat16);
  EXPECT_NE(module.table.data_ptr(), before);
  EXPECT_EQ(module.proj->weight.sizes(), (at::IntArrayRef{2, 3}));
  EXPECT_EQ(module.table.sizes(), (at::IntArrayRef{4}));
}

TEST_F(ComponentWeightsTest, LoadsEveryTensorInThePlacementsDtype) {
  ProjectionWithTable module;
  const io::TensorMap weights = Weights();
  ASSERT_TRUE(LoadComponentWeights(module, Write(weights),
                                   {.dtype = at::kBFloat16}, nullptr)
                  .ok());
  for (const auto& [name, expected] : weights) {
    const at::Tensor loaded =
        name == "table" ? module.table : module.named_parameters()[name];
    EXPECT_EQ(loaded.scalar_type(), at::kBFloat16) << name;
    EXPECT_TRUE(torch::equal(loaded, expected.to(at::kBFloat16))) << name;
  }
}

TEST_F(ComponentWeightsTest, ATensorTheCheckpointLacksFailsTheLoad) {
  ProjectionWithTable module;
  io::TensorMap weights = Weights();
  weights.erase("table");
  const absl::Status loaded =
      LoadComponentWeights(module, Write(weights), {}, nullptr);
  EXPECT_EQ(loaded.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(loaded.message(), HasSubstr("1 missing: table"));
}

}  // namespace
}  // namespace ditserve::models
