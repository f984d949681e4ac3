#ifndef DITSERVE_CORE_DIST_MESH_GROUPS_H_
#define DITSERVE_CORE_DIST_MESH_GROUPS_H_

#include <map>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dist/mesh.h"
#include "core/dist/process_group.h"
#include "core/dist/rendezvous.h"

namespace ditserve::dist {

// The Gloo sub-groups one rank belongs to: one per axis of the mesh
// (including sp = ring × ulysses), each formed from the store under the
// prefix "mesh/<axis>/<first rank of the group>".
class MeshGroups {
 public:
  // Every rank must call this with the same mesh; it blocks until the members
  // of each of its groups have joined (bounded by the connect timeout).
  static absl::StatusOr<MeshGroups> Create(const Mesh& mesh,
                                           Rendezvous& rendezvous);

  const ProcessGroupPtr& group(Axis axis) const { return groups_.at(axis); }
  // Global ranks of the group along `axis`, in group order.
  const std::vector<int>& ranks(Axis axis) const { return ranks_.at(axis); }

 private:
  std::map<Axis, ProcessGroupPtr> groups_;
  std::map<Axis, std::vector<int>> ranks_;
};

}  // namespace ditserve::dist

#endif  // DITSERVE_CORE_DIST_MESH_GROUPS_H_
