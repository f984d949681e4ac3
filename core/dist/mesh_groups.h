#ifndef DITSERVE_CORE_DIST_MESH_GROUPS_H_
#define DITSERVE_CORE_DIST_MESH_GROUPS_H_

#include <map>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dist/mesh.h"
#include "core/dist/process_group.h"
#include "core/dist/rendezvous.h"

namespace ditserve::dist {

// The data-plane groups one rank belongs to (Rendezvous::NewDataGroup: NCCL
// on CUDA, else Gloo): one per axis of the mesh (including sp = ring ×
// ulysses), each formed from the store under the prefix "mesh/<axis>/<first
// rank of the group>", and with PipeFusion a second pp group.
class MeshGroups {
 public:
  // Every rank must call this with the same mesh; it blocks until the members
  // of each of its groups have joined (bounded by the connect timeout).
  static absl::StatusOr<MeshGroups> Create(const Mesh& mesh,
                                           Rendezvous& rendezvous);

  const ProcessGroupPtr& group(Axis axis) const { return groups_.at(axis); }
  // The pp group's ranks again, for what travels from the last stage back
  // to earlier ones (null when the pp degree is 1). NCCL runs one pair's
  // transfers in one group in the order posted, so the last stage's noise
  // predictions would queue behind the earlier stages' forward sends, which
  // wait for receives the last stage posts later.
  const ProcessGroupPtr& pp_feedback() const { return pp_feedback_; }
  // Global ranks of the group along `axis`, in group order.
  const std::vector<int>& ranks(Axis axis) const { return ranks_.at(axis); }
  // CollectiveContext::leave_on_failure of the group along `axis`: its
  // ranks for every group within one dp group, whose ranks stop joining it
  // once one fails its share of a run (engine::RunDpGroup); none for the dp
  // axis, which a failed rank goes on joining.
  std::vector<int> LeaveOnFailure(Axis axis) const {
    return axis == Axis::kDp ? std::vector<int>{} : ranks(axis);
  }

 private:
  std::map<Axis, ProcessGroupPtr> groups_;
  ProcessGroupPtr pp_feedback_;
  std::map<Axis, std::vector<int>> ranks_;
};

}  // namespace ditserve::dist

#endif  // DITSERVE_CORE_DIST_MESH_GROUPS_H_
