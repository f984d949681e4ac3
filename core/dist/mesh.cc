#include "core/dist/mesh.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ditserve::dist {

absl::string_view AxisName(Axis axis) {
  switch (axis) {
    case Axis::kDp:
      return "dp";
    case Axis::kCfg:
      return "cfg";
    case Axis::kPp:
      return "pp";
    case Axis::kRing:
      return "ring";
    case Axis::kUlysses:
      return "ulysses";
    case Axis::kSp:
      return "sp";
  }
  return "unknown";
}

Mesh::Mesh(const v1::ParallelConfig& parallel)
    : dp_(parallel.dp_degree()),
      cfg_(parallel.cfg_degree()),
      pp_(parallel.pipefusion_degree()),
      ring_(parallel.ring_degree()),
      ulysses_(parallel.ulysses_degree()),
      world_size_(parallel.world_size()) {}

absl::StatusOr<Mesh> Mesh::Create(const v1::ParallelConfig& parallel) {
  const int degrees[] = {parallel.dp_degree(), parallel.cfg_degree(),
                         parallel.pipefusion_degree(), parallel.ring_degree(),
                         parallel.ulysses_degree()};
  const char* names[] = {"dp", "cfg", "pipefusion", "ring", "ulysses"};
  int64_t product = 1;
  for (int i = 0; i < 5; ++i) {
    if (degrees[i] < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          names[i], " degree ", degrees[i], " must be at least 1"));
    }
    product *= degrees[i];
  }
  if (product != parallel.world_size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dp ", degrees[0], " × cfg ", degrees[1], " × pipefusion ", degrees[2],
        " × ring ", degrees[3], " × ulysses ", degrees[4], " = ", product,
        " ≠ world size ", parallel.world_size()));
  }
  return Mesh(parallel);
}

int Mesh::Degree(Axis axis) const {
  switch (axis) {
    case Axis::kDp:
      return dp_;
    case Axis::kCfg:
      return cfg_;
    case Axis::kPp:
      return pp_;
    case Axis::kRing:
      return ring_;
    case Axis::kUlysses:
      return ulysses_;
    case Axis::kSp:
      return ring_ * ulysses_;
  }
  return 1;
}

MeshCoordinates Mesh::CoordinatesOf(int rank) const {
  MeshCoordinates coordinates;
  coordinates.ulysses = rank % ulysses_;
  rank /= ulysses_;
  coordinates.ring = rank % ring_;
  rank /= ring_;
  coordinates.pp = rank % pp_;
  rank /= pp_;
  coordinates.cfg = rank % cfg_;
  coordinates.dp = rank / cfg_;
  return coordinates;
}

int Mesh::RankOf(const MeshCoordinates& c) const {
  return (((c.dp * cfg_ + c.cfg) * pp_ + c.pp) * ring_ + c.ring) * ulysses_ +
         c.ulysses;
}

int Mesh::IndexInGroup(Axis axis, int rank) const {
  const MeshCoordinates c = CoordinatesOf(rank);
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
      return c.ring * ulysses_ + c.ulysses;
  }
  return 0;
}

std::vector<int> Mesh::GroupOf(Axis axis, int rank) const {
  const MeshCoordinates base = CoordinatesOf(rank);
  std::vector<int> group;
  group.reserve(Degree(axis));
  for (int index = 0; index < Degree(axis); ++index) {
    MeshCoordinates member = base;
    switch (axis) {
      case Axis::kDp:
        member.dp = index;
        break;
      case Axis::kCfg:
        member.cfg = index;
        break;
      case Axis::kPp:
        member.pp = index;
        break;
      case Axis::kRing:
        member.ring = index;
        break;
      case Axis::kUlysses:
        member.ulysses = index;
        break;
      case Axis::kSp:
        member.ring = index / ulysses_;
        member.ulysses = index % ulysses_;
        break;
    }
    group.push_back(RankOf(member));
  }
  return group;
}

std::vector<std::vector<int>> Mesh::AllGroups(Axis axis) const {
  std::vector<std::vector<int>> groups;
  std::vector<bool> placed(world_size_, false);
  for (int rank = 0; rank < world_size_; ++rank) {
    if (placed[rank]) continue;
    std::vector<int> group = GroupOf(axis, rank);
    for (int member : group) placed[member] = true;
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace ditserve::dist
