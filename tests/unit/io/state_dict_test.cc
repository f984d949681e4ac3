#include "core/io/state_dict.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/io/safetensors.h"

namespace ditserve::io {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// Two blocks with a linear layer and a buffer each, named like diffusers
// modules ("blocks.0.proj.weight", "blocks.1.scale").
struct TinyModel : torch::nn::Module {
  TinyModel() {
    blocks = register_module("blocks", torch::nn::ModuleList());
    for (int i = 0; i < 2; ++i) {
      auto block = std::make_shared<torch::nn::Module>();
      block->register_module("proj", torch::nn::Linear(3, 2));
      block->register_buffer("scale", torch::zeros({2}));
      blocks->push_back(block);
    }
  }
  torch::nn::ModuleList blocks;
};

TensorMap TinyModelWeights() {
  TensorMap weights;
  for (int i = 0; i < 2; ++i) {
    std::string prefix = absl::StrCat("blocks.", i, ".");
    weights[prefix + "proj.weight"] = torch::full({2, 3}, 1.0 + i);
    weights[prefix + "proj.bias"] = torch::full({2}, 10.0 + i);
    weights[prefix + "scale"] = torch::full({2}, 100.0 + i);
  }
  return weights;
}

class StateDictTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           absl::StrCat(
               "state_dict_test_",
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `weights` as a diffusers component folder and opens it.
  std::unique_ptr<CheckpointTensors> Checkpoint(const TensorMap& weights) {
    std::string path = (dir_ / "diffusion_pytorch_model.safetensors").string();
    EXPECT_TRUE(WriteSafetensors(path, weights, {{"format", "pt"}}).ok());
    auto checkpoint = CheckpointTensors::Open(dir_.string());
    EXPECT_TRUE(checkpoint.ok()) << checkpoint.status();
    return *std::move(checkpoint);
  }

  std::filesystem::path dir_;
};

TEST_F(StateDictTest, LoadsEveryParameterAndBufferByName) {
  TinyModel model;
  auto checkpoint = Checkpoint(TinyModelWeights());
  auto report = LoadStateDict(model, *checkpoint);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->tensors_loaded, 6);
  EXPECT_EQ(report->bytes_loaded, 2 * (6 + 2 + 2) * sizeof(float));
  EXPECT_EQ(report->bytes_mapped, checkpoint->mapped_bytes());
  for (const auto& item : model.named_parameters()) {
    EXPECT_TRUE(torch::equal(item.value(), TinyModelWeights().at(item.key())))
        << item.key();
  }
  for (const auto& item : model.named_buffers()) {
    EXPECT_TRUE(torch::equal(item.value(), TinyModelWeights().at(item.key())))
        << item.key();
  }
}

TEST_F(StateDictTest, ConvertsCheckpointDtypeToTheModuleDtype) {
  TinyModel model;
  TensorMap weights = TinyModelWeights();
  for (auto& [name, tensor] : weights) tensor = tensor.to(torch::kBFloat16);
  auto report = LoadStateDict(model, *Checkpoint(weights));
  ASSERT_TRUE(report.ok()) << report.status();
  for (const auto& item : model.named_parameters()) {
    EXPECT_EQ(item.value().scalar_type(), torch::kFloat32);
    EXPECT_TRUE(torch::equal(item.value(), TinyModelWeights().at(item.key())));
  }
}

TEST_F(StateDictTest, MissingUnexpectedAndMisshapedAreListedInOneError) {
  TinyModel model;
  TensorMap weights = TinyModelWeights();
  weights.erase("blocks.0.proj.bias");
  weights.erase("blocks.1.scale");
  weights["blocks.2.proj.weight"] = torch::ones({2, 3});
  weights["blocks.1.proj.weight"] = torch::ones({3, 2});
  auto checkpoint = Checkpoint(weights);
  auto report = LoadStateDict(model, *checkpoint);
  EXPECT_EQ(report.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      report.status().message(),
      AllOf(HasSubstr(checkpoint->path()), HasSubstr("2 missing"),
            HasSubstr("blocks.0.proj.bias"), HasSubstr("blocks.1.scale"),
            HasSubstr("1 unexpected"), HasSubstr("blocks.2.proj.weight"),
            HasSubstr("1 wrongly shaped"),
            HasSubstr("blocks.1.proj.weight (checkpoint [3, 2], "
                      "module [2, 3])")));
}

// Integers where the module holds weights would load cast, without a word.
TEST_F(StateDictTest, IntegersForFloatingPointWeightsAreRefusedNamingThem) {
  TinyModel model;
  TensorMap weights = TinyModelWeights();
  weights["blocks.0.proj.weight"] =
      weights["blocks.0.proj.weight"].to(torch::kInt32);
  auto checkpoint = Checkpoint(weights);
  auto report = LoadStateDict(model, *checkpoint);
  EXPECT_EQ(report.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(report.status().message(),
              HasSubstr("1 not floating point: blocks.0.proj.weight "
                        "(checkpoint I32, module Float)"));
}

TEST_F(StateDictTest, FailedLoadLeavesTheModuleUntouched) {
  TinyModel model;
  at::Tensor before =
      model.blocks[0]->named_parameters()["proj.weight"].clone();
  TensorMap weights = TinyModelWeights();
  weights["extra"] = torch::ones({1});
  ASSERT_FALSE(LoadStateDict(model, *Checkpoint(weights)).ok());
  EXPECT_TRUE(
      torch::equal(model.blocks[0]->named_parameters()["proj.weight"], before));
}

TEST_F(StateDictTest, IncludeFilterLoadsOnlyTheSelectedLayers) {
  TinyModel model;
  TensorMap weights = TinyModelWeights();
  // A stage that runs block 1 only; the checkpoint's block 0 is not needed
  // and the module's block 0 is not filled.
  LoadOptions options;
  options.include = [](absl::string_view name) {
    return name.rfind("blocks.1.", 0) == 0;
  };
  auto report = LoadStateDict(model, *Checkpoint(weights), options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->tensors_loaded, 3);
  EXPECT_TRUE(torch::equal(model.blocks[1]->named_buffers()["scale"],
                           weights.at("blocks.1.scale")));
  EXPECT_TRUE(torch::equal(model.blocks[0]->named_buffers()["scale"],
                           torch::zeros({2})));
}

TEST_F(StateDictTest, StripPrefixMatchesNamesInsideAContainer) {
  TinyModel model;
  TensorMap weights;
  for (const auto& [name, tensor] : TinyModelWeights()) {
    weights["text_model." + name] = tensor;
  }
  weights["other_model.x"] = torch::ones({1});
  LoadOptions options;
  options.strip_prefix = "text_model.";
  auto report = LoadStateDict(model, *Checkpoint(weights), options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->tensors_loaded, 6);
}

TEST_F(StateDictTest, AllowedUnexpectedNamesAreNotErrors) {
  TinyModel model;
  TensorMap weights = TinyModelWeights();
  weights["tied.weight"] = torch::ones({2, 3});
  LoadOptions options;
  options.allow_unexpected = {"tied.weight"};
  auto report = LoadStateDict(model, *Checkpoint(weights), options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->tensors_loaded, 6);
}

TEST_F(StateDictTest, LongListsAreShortened) {
  TinyModel model;
  TensorMap weights = TinyModelWeights();
  for (int i = 0; i < 30; ++i) {
    weights[absl::StrCat("stray.", i)] = torch::ones({1});
  }
  auto report = LoadStateDict(model, *Checkpoint(weights));
  EXPECT_THAT(report.status().message(),
              AllOf(HasSubstr("30 unexpected"), HasSubstr("and 10 more"),
                    Not(HasSubstr("stray.9,"))));
}

}  // namespace
}  // namespace ditserve::io
