// One rank of the sequence-parallel attention tests: joins the group from the
// torchrun variables the launcher sets, draws the same random q, k, v (and
// user key mask) from a fixed seed as every other rank, attends over this
// rank's shard of the padded sequence with the mesh's Attention (Ulysses,
// Ring or USP), and compares against LocalAttention over the whole sequence
// on one rank. Prints one line for the test to check:
//   RESULT rank=R attention=NAME shard_error=E gathered_error=E
//   ATTEND_FAILED rank=R code=CODE message=...
// Exit status: 0 after RESULT, 2 when start-up failed, 3 when attention or
// the gather failed.

#include <torch/torch.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_error.h"
#include "core/config/derived_shapes.h"
#include "core/dist/mesh.h"
#include "core/dist/mesh_groups.h"
#include "core/dist/rank_env.h"
#include "core/dist/rendezvous.h"
#include "core/dist/sigpipe.h"
#include "core/engine/compute_threads.h"
#include "core/parallel/local_attention.h"
#include "core/parallel/make_attention.h"
#include "core/parallel/ring_attention.h"
#include "core/parallel/sequence_sharding.h"
#include "core/parallel/ulysses_attention.h"
#include "core/parallel/usp_attention.h"

ABSL_FLAG(int, ulysses, 1, "ulysses degree");
ABSL_FLAG(int, ring, 1, "ring degree");
ABSL_FLAG(int, sequence_tokens, 13, "joint sequence length before padding");
ABSL_FLAG(bool, user_mask, false, "hide some keys with a user key mask");
ABSL_FLAG(int, batch, 2, "batch size");
ABSL_FLAG(int, heads, 4, "attention heads");
ABSL_FLAG(int, head_dim, 8, "channels per head");
ABSL_FLAG(int, seed, 20261122, "seed of q, k, v and the user mask");
ABSL_FLAG(int, timeout_ms, 10000, "timeout of every collective");
ABSL_FLAG(int, absent_rank, -1,
          "this rank joins the group but never attends (sleeps instead)");

namespace ditserve::testing {
namespace {

constexpr int kStartupFailed = 2;
constexpr int kAttendFailed = 3;

void PrintLine(const std::string& line) { std::cout << line << std::endl; }

std::string OneLine(absl::string_view text) {
  std::string line(text);
  for (char& c : line) {
    if (c == '\n') c = ' ';
  }
  return line;
}

// Which implementation MakeAttention chose.
const char* AttentionName(const models::Attention& attention) {
  if (dynamic_cast<const parallel::UspAttention*>(&attention)) return "usp";
  if (dynamic_cast<const parallel::RingAttention*>(&attention)) return "ring";
  if (dynamic_cast<const parallel::UlyssesAttention*>(&attention)) {
    return "ulysses";
  }
  if (dynamic_cast<const parallel::LocalAttention*>(&attention)) {
    return "local";
  }
  return "unknown";
}

// The shard, its key mask and the attention output of one rank, or the
// Status that stopped it.
absl::StatusOr<std::string> AttendAndCompare(
    int rank, const dist::Mesh& mesh, const dist::MeshGroups& groups,
    const parallel::SequenceParallelOptions& options) {
  const int tokens = absl::GetFlag(FLAGS_sequence_tokens);
  const int batch = absl::GetFlag(FLAGS_batch);
  at::manual_seed(absl::GetFlag(FLAGS_seed));
  const std::vector<int64_t> shape = {batch, absl::GetFlag(FLAGS_heads), tokens,
                                      absl::GetFlag(FLAGS_head_dim)};
  const at::Tensor q = at::randn(shape);
  const at::Tensor k = at::randn(shape);
  const at::Tensor v = at::randn(shape);
  std::optional<at::Tensor> user_mask;
  if (absl::GetFlag(FLAGS_user_mask)) {
    // About a third of the keys hidden, the first one always visible.
    user_mask = at::rand({batch, tokens}) > 0.3;
    user_mask->select(1, 0).fill_(true);
  }
  const at::Tensor expected =
      parallel::LocalAttention().Attend(q, k, v, user_mask);

  const int degree = mesh.Degree(dist::Axis::kSp);
  const config::SequenceSplit split = config::SplitSequence(tokens, degree);
  v1::DerivedShapes shapes;
  shapes.set_sequence_tokens(tokens);
  shapes.set_padded_sequence_tokens(split.padded_tokens);
  shapes.set_sequence_padding_tokens(split.padding_tokens);
  shapes.set_shard_tokens(split.shard_tokens);
  absl::StatusOr<parallel::SequenceSharding> sharding =
      parallel::SequenceSharding::Create(
          shapes, degree, mesh.IndexInGroup(dist::Axis::kSp, rank));
  if (!sharding.ok()) return sharding.status();
  absl::StatusOr<at::Tensor> q_shard = sharding->Shard(q, 2);
  absl::StatusOr<at::Tensor> k_shard = sharding->Shard(k, 2);
  absl::StatusOr<at::Tensor> v_shard = sharding->Shard(v, 2);
  absl::StatusOr<at::Tensor> mask_shard =
      sharding->ShardKeyMask(batch, user_mask);
  absl::StatusOr<at::Tensor> expected_shard = sharding->Shard(expected, 2);
  for (const auto* piece :
       {&q_shard, &k_shard, &v_shard, &mask_shard, &expected_shard}) {
    if (!piece->ok()) return piece->status();
  }
  // Without padding or a user mask every key is visible: no mask at all,
  // which is the path models take for unpadded sequences.
  std::optional<at::Tensor> key_mask;
  if (split.padding_tokens > 0 || user_mask.has_value()) key_mask = *mask_shard;

  std::unique_ptr<models::Attention> attention =
      parallel::MakeAttention(mesh, groups, options);
  at::Tensor output;
  try {
    output = attention->Attend(*q_shard, *k_shard, *v_shard, key_mask);
  } catch (const base::StatusError& error) {
    return error.status();
  }
  // Query rows of padding are dropped on gather; only real rows count.
  const int64_t first = sharding->index() * sharding->shard_tokens();
  const int64_t real_rows = std::max<int64_t>(
      0, std::min<int64_t>(sharding->shard_tokens(), tokens - first));
  const double shard_error = real_rows == 0 ? 0.0
                                            : (output - *expected_shard)
                                                  .narrow(2, 0, real_rows)
                                                  .abs()
                                                  .max()
                                                  .item<double>();
  // Gathered as the engine gathers a forward's outputs: [batch, tokens,
  // channels], here every head's values of a token.
  const int64_t channels = output.size(1) * output.size(3);
  absl::StatusOr<at::Tensor> gathered = sharding->Gather(
      parallel::GroupAlong(groups, dist::Axis::kSp, options),
      output.transpose(1, 2).reshape(
          {batch, sharding->shard_tokens(), channels}),
      at::empty({degree, batch, sharding->shard_tokens(), channels}));
  if (!gathered.ok()) return gathered.status();
  const double gathered_error =
      (gathered->view({batch, tokens, output.size(1), output.size(3)})
           .transpose(1, 2) -
       expected)
          .abs()
          .max()
          .item<double>();
  return absl::StrCat("RESULT rank=", rank,
                      " attention=", AttentionName(*attention),
                      " real_rows=", real_rows, " shard_error=", shard_error,
                      " gathered_error=", gathered_error);
}

int Main() {
  dist::IgnoreSigpipe();
  // Up to four ranks share the cores; OpenBLAS threads would oversubscribe.
  engine::SetComputeThreads(1);
  const std::chrono::milliseconds timeout(absl::GetFlag(FLAGS_timeout_ms));
  absl::StatusOr<dist::RankEnv> env = dist::ResolveRankEnvFromProcess({});
  if (!env.ok()) {
    PrintLine(
        absl::StrCat("STARTUP_FAILED ", OneLine(env.status().ToString())));
    return kStartupFailed;
  }
  dist::RendezvousOptions rendezvous_options;
  rendezvous_options.connect_timeout = std::chrono::milliseconds(30000);
  rendezvous_options.collective_timeout = timeout;
  absl::StatusOr<std::unique_ptr<dist::Rendezvous>> rendezvous =
      dist::Rendezvous::Connect(*env, rendezvous_options, {});
  if (!rendezvous.ok()) {
    PrintLine(absl::StrCat("STARTUP_FAILED ",
                           OneLine(rendezvous.status().ToString())));
    return kStartupFailed;
  }
  v1::ParallelConfig parallel;
  parallel.set_world_size(env->world_size);
  parallel.set_dp_degree(1);
  parallel.set_cfg_degree(1);
  parallel.set_pipefusion_degree(1);
  parallel.set_ring_degree(absl::GetFlag(FLAGS_ring));
  parallel.set_ulysses_degree(absl::GetFlag(FLAGS_ulysses));
  absl::StatusOr<dist::Mesh> mesh = dist::Mesh::Create(parallel);
  if (!mesh.ok()) {
    PrintLine(
        absl::StrCat("STARTUP_FAILED ", OneLine(mesh.status().ToString())));
    return kStartupFailed;
  }
  absl::StatusOr<dist::MeshGroups> groups =
      dist::MeshGroups::Create(*mesh, **rendezvous);
  if (!groups.ok()) {
    PrintLine(
        absl::StrCat("STARTUP_FAILED ", OneLine(groups.status().ToString())));
    return kStartupFailed;
  }
  const int rank = env->rank;
  if (rank == absl::GetFlag(FLAGS_absent_rank)) {
    // Alive (heartbeat running) but silent for longer than the timeout, so
    // the others' waits must end on their own.
    std::this_thread::sleep_for(3 * timeout);
    return 0;
  }
  absl::StatusOr<std::string> result = AttendAndCompare(
      rank, *mesh, *groups,
      {.timeout = timeout, .watchdog = &(*rendezvous)->watchdog()});
  if (!result.ok()) {
    PrintLine(absl::StrCat("ATTEND_FAILED rank=", rank, " code=",
                           absl::StatusCodeToString(result.status().code()),
                           " message=", OneLine(result.status().message())));
    return kAttendFailed;
  }
  PrintLine(*result);
  return 0;
}

}  // namespace
}  // namespace ditserve::testing

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return ditserve::testing::Main();
}
