#include "core/engine/engine.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/dist/collective_failure.h"
#include "core/dist/control_channel.h"
#include "core/dist/mesh.h"
#include "core/dist/mesh_groups.h"
#include "core/dist/rendezvous.h"
#include "core/dist/run_failure_board.h"
#include "core/engine/buffer_plan.h"
#include "core/engine/dp_gather.h"
#include "core/engine/receive_buffers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/frozen_test_config.h"
#include "tools/local_cluster/rank_launcher.h"

namespace ditserve::engine {
namespace {

using ::ditserve::testing::FreezeTestConfig;
using ::ditserve::testing::TestConfigRequest;
using ::ditserve::testing::TestParallelConfig;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int kHiddenSize = 8;

// Walks the steps through the engine's step boundary, counting them, and
// returns the planned output.
class StepCountingProgram : public RankProgram {
 public:
  absl::StatusOr<at::Tensor> Run(RankContext& context) override {
    steps_seen = 0;
    for (int step = 0; step < context.config.num_inference_steps(); ++step) {
      ++steps_seen;
      absl::Status status = context.step_boundary(step);
      if (!status.ok()) return status;
    }
    return context.buffers.Get(kOutputLatents);
  }
  absl::StatusOr<at::Tensor> Decode(const v1::InputConfig& /*config*/,
                                    const at::Tensor& /*latents*/,
                                    StageTimings& /*timings*/) override {
    return absl::UnimplementedError("the engine tests never decode");
  }

  int steps_seen = 0;
};

// Throws as a LibTorch kernel or allocation does.
class ThrowingProgram : public StepCountingProgram {
 public:
  absl::StatusOr<at::Tensor> Run(RankContext& /*context*/) override {
    TORCH_CHECK(false, "kernel failed");
    return at::Tensor();
  }
};

class CancelAtFirstStep : public RunObserver {
 public:
  v1::StepDecision DecideAfterStep(int step, int steps) override {
    return v1::STEP_DECISION_CANCEL;
  }
};

// One rank on loopback: a real TCPStore, Gloo groups and control channel.
class EngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<int> port = local_cluster::PickFreePort();
    ASSERT_TRUE(port.ok()) << port.status();
    dist::RendezvousOptions options;
    options.connect_timeout = std::chrono::seconds(10);
    options.collective_timeout = std::chrono::seconds(5);
    absl::StatusOr<std::unique_ptr<dist::Rendezvous>> rendezvous =
        dist::Rendezvous::Connect({.rank = 0,
                                   .world_size = 1,
                                   .local_rank = 0,
                                   .master_addr = "127.0.0.1",
                                   .master_port = *port},
                                  options, {});
    ASSERT_TRUE(rendezvous.ok()) << rendezvous.status();
    rendezvous_ = std::move(*rendezvous).release();
    absl::StatusOr<dist::Mesh> mesh = dist::Mesh::Create(Parallel());
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    mesh_ = new dist::Mesh(*mesh);
    absl::StatusOr<dist::MeshGroups> groups =
        dist::MeshGroups::Create(*mesh_, *rendezvous_);
    ASSERT_TRUE(groups.ok()) << groups.status();
    groups_ = new dist::MeshGroups(*std::move(groups));
    channel_ = new dist::ControlChannel(rendezvous_->control(), 0, 1, {},
                                        {.timeout = std::chrono::seconds(5)});
  }

  static void TearDownTestSuite() {
    delete channel_;
    delete groups_;
    delete mesh_;
    delete rendezvous_;
  }

  static v1::ParallelConfig Parallel() {
    absl::StatusOr<v1::ParallelConfig> parallel = TestParallelConfig(1);
    EXPECT_TRUE(parallel.ok()) << parallel.status();
    return *parallel;
  }

  static v1::InputConfig Config(int max_sequence_length,
                                const std::string& request_id = "req") {
    TestConfigRequest request;
    request.max_sequence_length = max_sequence_length;
    request.request_id = request_id;
    absl::StatusOr<v1::InputConfig> config =
        FreezeTestConfig(request, Parallel());
    EXPECT_TRUE(config.ok()) << config.status();
    return *config;
  }

  Engine MakeEngine() { return MakeEngine(pipeline_); }
  Engine MakeEngine(RankProgram& program) {
    return Engine(0, *mesh_, *groups_, *channel_, {}, program,
                  {.dimensions = {.hidden_size = kHiddenSize},
                   .tensor_options = at::TensorOptions(at::kFloat),
                   .collective_timeout = std::chrono::seconds(5)});
  }

  static dist::Rendezvous* rendezvous_;
  static dist::Mesh* mesh_;
  static dist::MeshGroups* groups_;
  static dist::ControlChannel* channel_;
  StepCountingProgram pipeline_;
  StageTimings timings_;
};

dist::Rendezvous* EngineTest::rendezvous_ = nullptr;
dist::Mesh* EngineTest::mesh_ = nullptr;
dist::MeshGroups* EngineTest::groups_ = nullptr;
dist::ControlChannel* EngineTest::channel_ = nullptr;

TEST_F(EngineTest, PrepareReallocatesOnlyWhenTheShapeKeyChanges) {
  Engine engine = MakeEngine();
  ASSERT_TRUE(engine.Prepare(Config(256, "a"), timings_).ok());
  EXPECT_EQ(engine.allocations(), 1);
  ASSERT_TRUE(engine.Prepare(Config(256, "b"), timings_).ok());
  EXPECT_EQ(engine.allocations(), 1);

  ASSERT_TRUE(engine.Prepare(Config(512, "c"), timings_).ok());
  EXPECT_EQ(engine.allocations(), 2);
}

TEST_F(EngineTest, RunOfAConfigThatWasNotPreparedIsRefusedListingTheFields) {
  Engine engine = MakeEngine();
  ASSERT_TRUE(engine.Prepare(Config(256), timings_).ok());
  absl::StatusOr<at::Tensor> output =
      engine.Run(Config(512, "unprepared"), nullptr, timings_);
  ASSERT_FALSE(output.ok());
  EXPECT_EQ(output.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(
      std::string(output.status().message()),
      HasSubstr("config unprepared does not match the prepared shapes"));
  EXPECT_THAT(std::string(output.status().message()),
              HasSubstr("max_sequence_length 256 → 512"));
  EXPECT_EQ(pipeline_.steps_seen, 0);
}

TEST_F(EngineTest, RunBeforeAnyPrepareIsRefused) {
  Engine engine = MakeEngine();
  absl::StatusOr<at::Tensor> output =
      engine.Run(Config(256), nullptr, timings_);
  ASSERT_FALSE(output.ok());
  EXPECT_EQ(output.status().code(), absl::StatusCode::kInternal);
}

TEST_F(EngineTest, PreparedConfigRunsEveryStepAndReturnsThePlannedOutput) {
  Engine engine = MakeEngine();
  const v1::InputConfig config = Config(256);
  ASSERT_TRUE(engine.Prepare(config, timings_).ok());
  absl::StatusOr<at::Tensor> output = engine.Run(config, nullptr, timings_);
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_EQ(pipeline_.steps_seen, config.num_inference_steps());
  EXPECT_THAT(output->sizes().vec(),
              ElementsAre(1, config.shapes().latent_channels(),
                          config.shapes().latent_height(),
                          config.shapes().latent_width()));
  EXPECT_GT(timings_.seconds(Stage::kPrepare), 0.0);
}

TEST_F(EngineTest, ObserverCancelStopsTheRunAtTheFirstStepBoundary) {
  Engine engine = MakeEngine();
  const v1::InputConfig config = Config(256, "cancelled");
  ASSERT_TRUE(engine.Prepare(config, timings_).ok());
  CancelAtFirstStep observer;
  absl::StatusOr<at::Tensor> output = engine.Run(config, &observer, timings_);
  ASSERT_FALSE(output.ok());
  EXPECT_EQ(output.status().code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(std::string(output.status().message()),
              HasSubstr("request cancelled after step 1 of 2"));
  EXPECT_EQ(pipeline_.steps_seen, 1);
}

TEST_F(EngineTest, WhatTheProgramThrowsBecomesTheRunsStatus) {
  ThrowingProgram program;
  Engine engine = MakeEngine(program);
  const v1::InputConfig config = Config(256, "throws");
  ASSERT_TRUE(engine.Prepare(config, timings_).ok());
  absl::StatusOr<at::Tensor> output = engine.Run(config, nullptr, timings_);
  ASSERT_FALSE(output.ok());
  EXPECT_EQ(output.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(output.status().message(),
            "running the rank program: kernel failed");
}

TEST_F(EngineTest, RankZeroForgetsARunsFailuresTwoRunsLater) {
  dist::RunFailureBoard board(rendezvous_->store(), /*world_size=*/1);
  Engine engine(0, *mesh_, *groups_, *channel_, {}, pipeline_,
                {.dimensions = {.hidden_size = kHiddenSize},
                 .tensor_options = at::TensorOptions(at::kFloat),
                 .collective_timeout = std::chrono::seconds(5),
                 .run_failures = &board});
  const v1::InputConfig config = Config(256, "forgotten");
  ASSERT_TRUE(engine.Prepare(config, timings_).ok());
  ASSERT_TRUE(engine.Run(config, nullptr, timings_).ok());
  ASSERT_TRUE(board.Post(1, 0, absl::InternalError("failed")).ok());
  ASSERT_EQ(board.Count(1).value_or(-1), 1);
  ASSERT_TRUE(engine.Run(config, nullptr, timings_).ok());
  EXPECT_EQ(board.Count(1).value_or(-1), 1) << "run 2's watchdogs may read";
  ASSERT_TRUE(engine.Run(config, nullptr, timings_).ok());
  EXPECT_EQ(board.Count(1).value_or(-1), 0);
}

TEST_F(EngineTest, PassedDeadlineStopsTheRun) {
  Engine engine = MakeEngine();
  v1::InputConfig config = Config(256, "late");
  config.set_deadline_unix_micros(1);
  ASSERT_TRUE(engine.Prepare(config, timings_).ok());
  absl::StatusOr<at::Tensor> output = engine.Run(config, nullptr, timings_);
  ASSERT_FALSE(output.ok());
  EXPECT_EQ(output.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST_F(EngineTest, ConfigFrozenForAnotherMeshIsRefused) {
  Engine engine = MakeEngine();
  v1::InputConfig config = Config(256);
  config.mutable_parallel()->set_ulysses_degree(2);
  config.mutable_parallel()->set_world_size(2);
  absl::Status status = engine.Prepare(config, timings_);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("parallel.ulysses_degree 2 (mesh 1)"));
}

// The latents a dp group's ranks pad for the gather may not fit on a rank
// short of memory: that fails the run with RESOURCE_EXHAUSTED naming them,
// rather than escaping to Engine::Run's boundary as INTERNAL.
TEST_F(EngineTest, LatentsThatCannotBePaddedForTheDpGatherFailTheRun) {
  const v1::InputConfig prepared = Config(256, "unpaddable");
  absl::StatusOr<BufferPlan> plan = PlanBuffers(
      prepared, mesh_->CoordinatesOf(0), {.hidden_size = kHiddenSize});
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<ReceiveBuffers> buffers =
      ReceiveBuffers::Allocate(*plan, at::TensorOptions(at::kFloat));
  ASSERT_TRUE(buffers.ok()) << buffers.status();
  // 2^62 bytes of padded latents: more than any address space, so the
  // allocation fails at once, whatever the machine's overcommit policy.
  v1::InputConfig config = prepared;
  for (int i = 0; i < config.shapes().image_latent_shape_size(); ++i) {
    config.mutable_shapes()->set_image_latent_shape(i, 1 << 20);
  }
  ASSERT_EQ(config.shapes().image_latent_shape_size(), 3);
  ASSERT_EQ(config.shapes().max_batch_per_dp_group(), 1);
  RankContext context{.config = config,
                      .rank = 0,
                      .mesh = *mesh_,
                      .groups = *groups_,
                      .buffers = *buffers,
                      .timings = timings_};
  absl::StatusOr<at::Tensor> output =
      RunDpGroup(context, [](int first, int end) -> absl::StatusOr<at::Tensor> {
        return at::zeros({end - first, 1});
      });
  ASSERT_FALSE(output.ok());
  EXPECT_EQ(output.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(output.status().message()),
              HasSubstr("the dp group's padded latents"));
  // One dp group: no other group's ranks wait in a gather for this one.
  EXPECT_FALSE(dist::IsCollectiveFailure(output.status()));
}

}  // namespace
}  // namespace ditserve::engine
