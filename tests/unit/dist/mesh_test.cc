#include "core/dist/mesh.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::dist {
namespace {

using ::testing::HasSubstr;

// Every (dp, cfg, pp, ring, ulysses) whose product is `world`.
std::vector<v1::ParallelConfig> Factorisations(int world) {
  std::vector<v1::ParallelConfig> result;
  for (int dp = 1; dp <= world; ++dp) {
    for (int cfg = 1; cfg <= world; ++cfg) {
      for (int pp = 1; pp <= world; ++pp) {
        for (int ring = 1; ring <= world; ++ring) {
          for (int ulysses = 1; ulysses <= world; ++ulysses) {
            if (dp * cfg * pp * ring * ulysses != world) continue;
            v1::ParallelConfig parallel;
            parallel.set_world_size(world);
            parallel.set_dp_degree(dp);
            parallel.set_cfg_degree(cfg);
            parallel.set_pipefusion_degree(pp);
            parallel.set_ring_degree(ring);
            parallel.set_ulysses_degree(ulysses);
            result.push_back(parallel);
          }
        }
      }
    }
  }
  return result;
}

std::string Name(const v1::ParallelConfig& p) {
  return absl::StrCat("dp", p.dp_degree(), " cfg", p.cfg_degree(), " pp",
                      p.pipefusion_degree(), " ring", p.ring_degree(),
                      " ulysses", p.ulysses_degree());
}

int Coordinate(const MeshCoordinates& c, Axis axis, int ulysses) {
  switch (axis) {
    case Axis::kDp:
      return c.dp;
    case Axis::kCfg:
      return c.cfg;
    case Axis::kPp:
      return c.pp;
    case Axis::kRing:
      return c.ring;
    case Axis::kUlysses:
      return c.ulysses;
    case Axis::kSp:
      return c.ring * ulysses + c.ulysses;
  }
  return -1;
}

// The coordinates a group along `axis` must share.
std::vector<int> OtherCoordinates(const MeshCoordinates& c, Axis axis) {
  std::vector<int> others = {c.dp, c.cfg, c.pp, c.ring, c.ulysses};
  auto clear = [&](int index) { others[index] = -1; };
  switch (axis) {
    case Axis::kDp:
      clear(0);
      break;
    case Axis::kCfg:
      clear(1);
      break;
    case Axis::kPp:
      clear(2);
      break;
    case Axis::kRing:
      clear(3);
      break;
    case Axis::kUlysses:
      clear(4);
      break;
    case Axis::kSp:
      clear(3);
      clear(4);
      break;
  }
  return others;
}

TEST(MeshTest, CoordinatesRoundTripWithUlyssesFastestForEveryFactorisation) {
  for (int world = 1; world <= 8; ++world) {
    for (const v1::ParallelConfig& parallel : Factorisations(world)) {
      absl::StatusOr<Mesh> mesh = Mesh::Create(parallel);
      ASSERT_TRUE(mesh.ok()) << mesh.status();
      int expected_rank = 0;
      // Nested in rank order: dp slowest, ulysses fastest.
      for (int dp = 0; dp < parallel.dp_degree(); ++dp) {
        for (int cfg = 0; cfg < parallel.cfg_degree(); ++cfg) {
          for (int pp = 0; pp < parallel.pipefusion_degree(); ++pp) {
            for (int ring = 0; ring < parallel.ring_degree(); ++ring) {
              for (int ulysses = 0; ulysses < parallel.ulysses_degree();
                   ++ulysses) {
                const MeshCoordinates expected{dp, cfg, pp, ring, ulysses};
                EXPECT_TRUE(mesh->CoordinatesOf(expected_rank) == expected)
                    << Name(parallel) << " rank " << expected_rank;
                EXPECT_EQ(mesh->RankOf(expected), expected_rank)
                    << Name(parallel);
                ++expected_rank;
              }
            }
          }
        }
      }
      EXPECT_EQ(expected_rank, world);
    }
  }
}

TEST(MeshTest, GroupsPartitionTheWorldAlongEveryAxisForEveryFactorisation) {
  for (int world = 1; world <= 8; ++world) {
    for (const v1::ParallelConfig& parallel : Factorisations(world)) {
      absl::StatusOr<Mesh> mesh = Mesh::Create(parallel);
      ASSERT_TRUE(mesh.ok()) << mesh.status();
      for (Axis axis : kAllAxes) {
        const std::string where =
            absl::StrCat(Name(parallel), " axis ", AxisName(axis));
        std::vector<std::vector<int>> groups = mesh->AllGroups(axis);
        EXPECT_EQ(static_cast<int>(groups.size()) * mesh->Degree(axis), world)
            << where;
        std::set<int> seen;
        for (const std::vector<int>& group : groups) {
          ASSERT_EQ(static_cast<int>(group.size()), mesh->Degree(axis))
              << where;
          const std::vector<int> shared =
              OtherCoordinates(mesh->CoordinatesOf(group.front()), axis);
          for (int index = 0; index < static_cast<int>(group.size()); ++index) {
            const int rank = group[index];
            EXPECT_TRUE(seen.insert(rank).second)
                << where << ": rank " << rank << " in two groups";
            const MeshCoordinates c = mesh->CoordinatesOf(rank);
            EXPECT_EQ(OtherCoordinates(c, axis), shared) << where;
            EXPECT_EQ(Coordinate(c, axis, parallel.ulysses_degree()), index)
                << where;
            EXPECT_EQ(mesh->IndexInGroup(axis, rank), index) << where;
            EXPECT_EQ(mesh->GroupOf(axis, rank), group) << where;
          }
        }
        EXPECT_EQ(static_cast<int>(seen.size()), world) << where;
      }
    }
  }
}

TEST(MeshTest, SequenceParallelGroupIsRingTimesUlyssesConsecutiveRanks) {
  v1::ParallelConfig parallel;
  parallel.set_world_size(8);
  parallel.set_dp_degree(2);
  parallel.set_cfg_degree(1);
  parallel.set_pipefusion_degree(1);
  parallel.set_ring_degree(2);
  parallel.set_ulysses_degree(2);
  absl::StatusOr<Mesh> mesh = Mesh::Create(parallel);
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  EXPECT_EQ(mesh->GroupOf(Axis::kSp, 5), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(mesh->GroupOf(Axis::kUlysses, 5), (std::vector<int>{4, 5}));
  EXPECT_EQ(mesh->GroupOf(Axis::kRing, 5), (std::vector<int>{5, 7}));
  EXPECT_EQ(mesh->GroupOf(Axis::kDp, 5), (std::vector<int>{1, 5}));
}

TEST(MeshTest, DegreesWhoseProductIsNotTheWorldSizeAreRejected) {
  v1::ParallelConfig parallel;
  parallel.set_world_size(4);
  parallel.set_dp_degree(1);
  parallel.set_cfg_degree(1);
  parallel.set_pipefusion_degree(1);
  parallel.set_ring_degree(1);
  parallel.set_ulysses_degree(2);
  absl::StatusOr<Mesh> mesh = Mesh::Create(parallel);
  ASSERT_FALSE(mesh.ok());
  EXPECT_EQ(mesh.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(mesh.status().message()),
              HasSubstr("= 2 ≠ world size 4"));
}

TEST(MeshTest, ZeroDegreeIsRejected) {
  v1::ParallelConfig parallel;
  parallel.set_world_size(1);
  parallel.set_dp_degree(1);
  parallel.set_cfg_degree(1);
  parallel.set_pipefusion_degree(1);
  parallel.set_ring_degree(0);
  parallel.set_ulysses_degree(1);
  absl::StatusOr<Mesh> mesh = Mesh::Create(parallel);
  ASSERT_FALSE(mesh.ok());
  EXPECT_THAT(std::string(mesh.status().message()),
              HasSubstr("ring degree 0 must be at least 1"));
}

}  // namespace
}  // namespace ditserve::dist
