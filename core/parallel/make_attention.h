#ifndef DITSERVE_CORE_PARALLEL_MAKE_ATTENTION_H_
#define DITSERVE_CORE_PARALLEL_MAKE_ATTENTION_H_

#include <chrono>
#include <memory>
#include <optional>

#include "core/dist/collective.h"
#include "core/dist/mesh.h"
#include "core/dist/mesh_groups.h"
#include "core/models/layers/attention.h"
#include "core/parallel/group_collectives.h"
#include "core/parallel/stale_kv_attention.h"

namespace ditserve::parallel {

// How the sequence-parallel collectives are bounded and explained.
struct SequenceParallelOptions {
  std::chrono::milliseconds timeout{30000};
  // Names hung and lost ranks; may be null.
  dist::Watchdog* watchdog = nullptr;
};

// `groups`' group along `axis` with the context its collectives use (the
// group is named after the axis: "ring", "ulysses", "sp").
Group GroupAlong(const dist::MeshGroups& groups, dist::Axis axis,
                 const SequenceParallelOptions& options);

// The Attention a rank of `mesh` uses: LocalAttention when ring × ulysses
// is 1, else UlyssesAttention, RingAttention or UspAttention over the
// rank's groups in `groups`.
std::unique_ptr<models::Attention> MakeAttention(
    const dist::Mesh& mesh, const dist::MeshGroups& groups,
    const SequenceParallelOptions& options);

// The attention of a PipeFusion stage's transformer: `stale_kv`, which the
// PipeFusion driver tells which rows each forward computes, and `attention`,
// what the transformer calls (the same object, or UlyssesAttention around it
// when the Ulysses degree is above 1).
struct PipeFusionAttention {
  std::shared_ptr<StaleKvAttention> stale_kv;
  std::shared_ptr<models::Attention> attention;
};

// The PipeFusionAttention of a stage rank whose ring ranks all-gather their
// keys and values over `ring` and whose Ulysses ranks exchange heads over
// `ulysses` (StaleKvSharing); unset for degree 1.
PipeFusionAttention MakePipeFusionAttention(std::optional<Group> ring,
                                            std::optional<Group> ulysses);

// The same for a rank of `mesh` (pp > 1), over its groups in `groups`.
PipeFusionAttention MakePipeFusionAttention(
    const dist::Mesh& mesh, const dist::MeshGroups& groups,
    const SequenceParallelOptions& options);

}  // namespace ditserve::parallel

#endif  // DITSERVE_CORE_PARALLEL_MAKE_ATTENTION_H_
