#include "core/dist/mesh_groups.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace ditserve::dist {

absl::StatusOr<MeshGroups> MeshGroups::Create(const Mesh& mesh,
                                              Rendezvous& rendezvous) {
  const int rank = rendezvous.env().rank;
  MeshGroups groups;
  // Every rank walks the axes in the same order, so the members of a group
  // are all forming that group at the same time.
  for (Axis axis : kAllAxes) {
    std::vector<int> members = mesh.GroupOf(axis, rank);
    const std::string prefix =
        absl::StrCat("mesh/", AxisName(axis), "/", members.front());
    const int rank_in_group = mesh.IndexInGroup(axis, rank);
    const int size = static_cast<int>(members.size());
    ASSIGN_OR_RETURN(groups.groups_[axis],
                     rendezvous.NewDataGroup(prefix, rank_in_group, size));
    if (axis == Axis::kPp && size > 1) {
      ASSIGN_OR_RETURN(
          groups.pp_feedback_,
          rendezvous.NewDataGroup(absl::StrCat(prefix, "/feedback"),
                                  rank_in_group, size));
    }
    groups.ranks_[axis] = std::move(members);
  }
  return groups;
}

}  // namespace ditserve::dist
