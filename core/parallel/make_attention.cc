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
                           .find_lost_ranks = options.find_lost_ranks}};
}

std::unique_ptr<Attention> MakeAttention(
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

PipeFusionAttention MakePipeFusionAttention(
    const dist::Mesh& mesh, const dist::MeshGroups& groups,
    const SequenceParallelOptions& options) {
  StaleKvSharing sharing{.ulysses = mesh.Degree(dist::Axis::kUlysses)};
  if (mesh.Degree(dist::Axis::kRing) > 1) {
    sharing.ring = GroupAlong(groups, dist::Axis::kRing, options);
  }
  PipeFusionAttention attention;
  attention.stale_kv = std::make_shared<StaleKvAttention>(std::move(sharing));
  attention.attention = attention.stale_kv;
  if (mesh.Degree(dist::Axis::kUlysses) > 1) {
    attention.attention = std::make_shared<UlyssesAttention>(
        GroupAlong(groups, dist::Axis::kUlysses, options), attention.stale_kv);
  }
  return attention;
}

}  // namespace ditserve::parallel
