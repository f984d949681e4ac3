#include "core/config/parallel_config.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace ditserve::config {
namespace {

std::string DescribeProduct(const ParallelFlags& f, int product) {
  return absl::StrCat("dp ", f.dp_degree, " × cfg ", f.cfg_degree,
                      " × pipefusion ", f.pipefusion_degree, " × ring ",
                      f.ring_degree, " × ulysses ", f.ulysses_degree, " = ",
                      product);
}

absl::Status CheckPositive(const char* flag, int value) {
  if (value >= 1) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, " ", value, " must be at least 1"));
}

}  // namespace

absl::StatusOr<v1::ParallelConfig> MakeParallelConfig(
    const ParallelFlags& flags, int world_size) {
  for (const auto& [flag, value] :
       {std::pair{"dp_degree", flags.dp_degree},
        std::pair{"cfg_degree", flags.cfg_degree},
        std::pair{"pipefusion_degree", flags.pipefusion_degree},
        std::pair{"ring_degree", flags.ring_degree},
        std::pair{"ulysses_degree", flags.ulysses_degree}}) {
    if (absl::Status s = CheckPositive(flag, value); !s.ok()) return s;
  }
  if (flags.cfg_degree > 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("--cfg_degree ", flags.cfg_degree,
                     " is not allowed; use 1 or 2 (one rank per guidance "
                     "branch)"));
  }
  const int product = flags.dp_degree * flags.cfg_degree *
                      flags.pipefusion_degree * flags.ring_degree *
                      flags.ulysses_degree;
  if (product != world_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        DescribeProduct(flags, product), " ≠ world size ", world_size));
  }
  const int patches = flags.num_pipeline_patch == 0 ? flags.pipefusion_degree
                                                    : flags.num_pipeline_patch;
  if (flags.pipefusion_degree == 1 && patches != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--num_pipeline_patch ", patches,
        " needs --pipefusion_degree > 1 (it is 1); leave it unset"));
  }
  if (patches < flags.pipefusion_degree) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--num_pipeline_patch ", patches,
        " is smaller than --pipefusion_degree ", flags.pipefusion_degree,
        "; every stage needs a patch to work on"));
  }
  if (flags.warmup_steps < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--warmup_steps ", flags.warmup_steps, " must be at least 0"));
  }
  v1::ParallelConfig out;
  out.set_world_size(world_size);
  out.set_dp_degree(flags.dp_degree);
  out.set_cfg_degree(flags.cfg_degree);
  out.set_pipefusion_degree(flags.pipefusion_degree);
  out.set_ring_degree(flags.ring_degree);
  out.set_ulysses_degree(flags.ulysses_degree);
  out.set_num_pipeline_patch(patches);
  out.set_warmup_steps(flags.pipefusion_degree == 1 ? 0 : flags.warmup_steps);
  return out;
}

absl::Status ValidateParallelForModel(const v1::ParallelConfig& parallel,
                                      const ModelSpec& spec) {
  const FamilyDefaults& defaults = DefaultsFor(spec.family);
  if (spec.num_attention_heads % parallel.ulysses_degree() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--ulysses_degree ", parallel.ulysses_degree(), " does not divide the ",
        spec.num_attention_heads, " attention heads of ", defaults.name));
  }
  if (parallel.pipefusion_degree() > spec.num_layers) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--pipefusion_degree ", parallel.pipefusion_degree(), " exceeds the ",
        spec.num_layers, " transformer layers of ", defaults.name,
        "; each stage needs at least one layer"));
  }
  if (parallel.cfg_degree() == 2 && !defaults.uses_classifier_free_guidance) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--cfg_degree 2 needs a model with classifier-free guidance; ",
        defaults.name,
        (defaults.uses_guidance_embedding ? " uses a guidance embedding instead"
                                          : " runs one branch per image"),
        "; use --cfg_degree 1"));
  }
  const int rows = defaults.height / spec.size_multiple();
  if (rows < parallel.num_pipeline_patch()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--num_pipeline_patch ", parallel.num_pipeline_patch(), " exceeds the ",
        rows, " patch rows of the default ", defaults.height, "-pixel height"));
  }
  return absl::OkStatus();
}

int SequenceParallelDegree(const v1::ParallelConfig& parallel) {
  return parallel.ring_degree() * parallel.ulysses_degree();
}

}  // namespace ditserve::config
