#include "worker/served_parallelism.h"

#include "absl/strings/str_cat.h"
#include "core/config/parallel_config.h"

namespace ditserve::worker {
namespace {

// Whether `family` runs through a FLUX rank pipeline (the one with
// PipeFusion) rather than a guided one.
bool IsFlux(config::ModelFamily family) {
  switch (family) {
    case config::ModelFamily::kFluxDev:
    case config::ModelFamily::kFluxSchnell:
      return true;
    case config::ModelFamily::kPixArtAlpha:
    case config::ModelFamily::kPixArtSigma:
    case config::ModelFamily::kSd3Medium:
      return false;
  }
  return false;
}

}  // namespace

absl::Status CheckServedParallelism(const v1::ParallelConfig& parallel,
                                    config::ModelFamily family) {
  if (!IsFlux(family) && parallel.pipefusion_degree() > 1) {
    return absl::UnimplementedError(absl::StrCat(
        "--pipefusion_degree ", parallel.pipefusion_degree(), ": ",
        config::ModelFamilyName(family),
        " is served with data, CFG and sequence parallelism (--dp_degree, "
        "--cfg_degree, --ulysses_degree, --ring_degree); PipeFusion is "
        "implemented for FLUX.1 only"));
  }
  if (parallel.pipefusion_degree() > 1 &&
      config::SequenceParallelDegree(parallel) > 1) {
    return absl::UnimplementedError(absl::StrCat(
        "--pipefusion_degree ", parallel.pipefusion_degree(),
        " with --ring_degree ", parallel.ring_degree(), " × --ulysses_degree ",
        parallel.ulysses_degree(),
        ": PipeFusion combined with sequence parallelism is not implemented; "
        "use one of them (each may be combined with --dp_degree)"));
  }
  return absl::OkStatus();
}

}  // namespace ditserve::worker
