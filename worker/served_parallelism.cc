#include "worker/served_parallelism.h"

#include "absl/strings/str_cat.h"
#include "core/config/parallel_config.h"

namespace ditserve::worker {

absl::Status CheckServedParallelism(const v1::ParallelConfig& parallel) {
  if (parallel.pipefusion_degree() > 1 &&
      config::SequenceParallelDegree(parallel) > 1) {
    return absl::UnimplementedError(absl::StrCat(
        "--pipefusion_degree ", parallel.pipefusion_degree(),
        " with --ring_degree ", parallel.ring_degree(), " × --ulysses_degree ",
        parallel.ulysses_degree(),
        ": PipeFusion combined with sequence parallelism is not implemented; "
        "use one of them (each may be combined with --dp_degree and, for "
        "PixArt and SD3, --cfg_degree)"));
  }
  return absl::OkStatus();
}

}  // namespace ditserve::worker
