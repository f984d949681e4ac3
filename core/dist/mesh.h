#ifndef DITSERVE_CORE_DIST_MESH_H_
#define DITSERVE_CORE_DIST_MESH_H_

#include <array>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::dist {

// The parallel axes of the rank mesh, slowest first; kSp is the combined
// sequence-parallel axis ring × ulysses.
enum class Axis { kDp, kCfg, kPp, kRing, kUlysses, kSp };

inline constexpr std::array<Axis, 6> kAllAxes = {
    Axis::kDp, Axis::kCfg, Axis::kPp, Axis::kRing, Axis::kUlysses, Axis::kSp};

// "dp", "cfg", "pp", "ring", "ulysses", "sp".
absl::string_view AxisName(Axis axis);

// A rank's position along each axis.
struct MeshCoordinates {
  int dp = 0;
  int cfg = 0;
  int pp = 0;
  int ring = 0;
  int ulysses = 0;

  bool operator==(const MeshCoordinates& other) const {
    return dp == other.dp && cfg == other.cfg && pp == other.pp &&
           ring == other.ring && ulysses == other.ulysses;
  }
};

// world = dp × cfg × pp × ring × ulysses with ulysses varying fastest, then
// ring, pp, cfg, dp. Pure arithmetic: no communication.
class Mesh {
 public:
  // INVALID_ARGUMENT when a degree is < 1 or their product is not the world
  // size.
  static absl::StatusOr<Mesh> Create(const v1::ParallelConfig& parallel);

  int world_size() const { return world_size_; }
  // Number of ranks in one group along `axis` (ring × ulysses for kSp).
  int Degree(Axis axis) const;
  MeshCoordinates CoordinatesOf(int rank) const;
  int RankOf(const MeshCoordinates& coordinates) const;
  // Position of `rank` inside its group along `axis`.
  int IndexInGroup(Axis axis, int rank) const;
  // The ranks that share every coordinate with `rank` except those of
  // `axis`, ordered by their position along it.
  std::vector<int> GroupOf(Axis axis, int rank) const;
  // Every group along `axis`; together they partition the world, ordered by
  // their first rank.
  std::vector<std::vector<int>> AllGroups(Axis axis) const;

 private:
  explicit Mesh(const v1::ParallelConfig& parallel);

  int dp_;
  int cfg_;
  int pp_;
  int ring_;
  int ulysses_;
  int world_size_;
};

}  // namespace ditserve::dist

#endif  // DITSERVE_CORE_DIST_MESH_H_
