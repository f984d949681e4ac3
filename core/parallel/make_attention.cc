#include "core/parallel/make_attention.h"

#include <string>
#include <utility>

#include "core/parallel/local_attention.h"
#include "core/parallel/ring_attention.h"
#include "core/parallel/ulysses_attention.h"
#include "core/parallel/usp_attention.h"

namespace ditserve::parallel {

Group GroupAlong(const dist::MeshGroups& groups, dist::Axis axis,
                 const SequenceParallelOptions& options) {
  return Group{.group = groups.group(axis),
               .context = {.group_name = std::string(dist::AxisName(axis)),
                           .timeout = options.timeout,
                           .watchdog = options.watchdog,
                           .leave_on_failure = groups.LeaveOnFailure(axis)}};
}

std::unique_ptr<models::Attention> MakeAttention(
    const dist::Mesh& mesh, const dist::MeshGroups& groups,
    const SequenceParallelOptions& options) {
  const int ring = mesh.Degree(dist::Axis::kRing);
  const int ulysses = mesh.Degree(dist::Axis::kUlysses);
  if (ring == 1 && ulysses == 1) return std::make_unique<LocalAttention>();
  if (ring == 1) {
    return std::make_unique<UlyssesAttention>(
        GroupAlong(groups, dist::Axis::kUlysses, options),
        std::make_unique<LocalAttention>());
  }
  if (ulysses == 1) {
    return std::make_unique<RingAttention>(
        GroupAlong(groups, dist::Axis::kRing, options));
  }
  return std::make_unique<UspAttention>(
      GroupAlong(groups, dist::Axis::kUlysses, options),
      GroupAlong(groups, dist::Axis::kRing, options));
}

PipeFusionAttention MakePipeFusionAttention(std::optional<Group> ring,
                                            std::optional<Group> ulysses) {
  PipeFusionAttention attention;
  attention.stale_kv = std::make_shared<StaleKvAttention>(
      StaleKvSharing{.ring = std::move(ring),
                     .ulysses = ulysses.has_value() ? ulysses->size() : 1});
  attention.attention = attention.stale_kv;
  if (ulysses.has_value()) {
    attention.attention = std::make_shared<UlyssesAttention>(
        *std::move(ulysses), attention.stale_kv);
  }
  return attention;
}

PipeFusionAttention MakePipeFusionAttention(
    const dist::Mesh& mesh, const dist::MeshGroups& groups,
    const SequenceParallelOptions& options) {
  std::optional<Group> ring;
  std::optional<Group> ulysses;
  if (mesh.Degree(dist::Axis::kRing) > 1) {
    ring = GroupAlong(groups, dist::Axis::kRing, options);
  }
  if (mesh.Degree(dist::Axis::kUlysses) > 1) {
    ulysses = GroupAlong(groups, dist::Axis::kUlysses, options);
  }
  return MakePipeFusionAttention(std::move(ring), std::move(ulysses));
}

}  // namespace ditserve::parallel
