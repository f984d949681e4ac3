#include "core/config/parallel_config.h"

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace ditserve::config {
namespace {

// "cfg 1 × pipefusion 4 × ring 1 × ulysses 1"
std::string DescribeModelDegrees(const ParallelFlags& f) {
  return absl::StrCat("cfg ", f.cfg_degree, " × pipefusion ",
                      f.pipefusion_degree, " × ring ", f.ring_degree,
                      " × ulysses ", f.ulysses_degree);
}

// The product of positive `degrees`, or nullopt once it passes INT_MAX,
// beyond any world size: four flags of up to INT_MAX each would overflow any
// integer type, and an overflowed product of zero would divide by zero.
std::optional<int> ProductOfDegrees(std::initializer_list<int> degrees) {
  int64_t product = 1;
  for (const int degree : degrees) {
    product *= degree;
    if (product > std::numeric_limits<int>::max()) return std::nullopt;
  }
  return static_cast<int>(product);
}

// The explicit --dp_degree, or world / (cfg × pipefusion × ring × ulysses).
absl::StatusOr<int> DataParallelDegree(const ParallelFlags& flags,
                                       int world_size) {
  const std::optional<int> model_ranks =
      ProductOfDegrees({flags.cfg_degree, flags.pipefusion_degree,
                        flags.ring_degree, flags.ulysses_degree});
  const std::optional<int> ranks =
      ProductOfDegrees({flags.dp_degree.value_or(1), model_ranks.value_or(1)});
  if (!model_ranks.has_value() || !ranks.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        flags.dp_degree.has_value()
            ? absl::StrCat("dp ", *flags.dp_degree, " × ")
            : "",
        DescribeModelDegrees(flags), " exceeds the world size ", world_size));
  }
  if (flags.dp_degree.has_value()) {
    if (*ranks != world_size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dp ", *flags.dp_degree, " × ", DescribeModelDegrees(flags), " = ",
          *ranks, " ≠ world size ", world_size));
    }
    return *flags.dp_degree;
  }
  if (world_size % *model_ranks != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "world size ", world_size, " is not a multiple of ",
        DescribeModelDegrees(flags), " = ", *model_ranks,
        " (--dp_degree omitted, so it would be world size / that product)"));
  }
  return world_size / *model_ranks;
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
       {std::pair{"dp_degree", flags.dp_degree.value_or(1)},
        std::pair{"cfg_degree", flags.cfg_degree},
        std::pair{"pipefusion_degree", flags.pipefusion_degree},
        std::pair{"ring_degree", flags.ring_degree},
        std::pair{"ulysses_degree", flags.ulysses_degree}}) {
    RETURN_IF_ERROR(CheckPositive(flag, value));
  }
  if (flags.cfg_degree > 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("--cfg_degree ", flags.cfg_degree,
                     " is not allowed; use 1 or 2 (one rank per guidance "
                     "branch)"));
  }
  ASSIGN_OR_RETURN(int dp_degree, DataParallelDegree(flags, world_size));
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
  out.set_dp_degree(dp_degree);
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
  const ModelDefaults& defaults = spec.defaults;
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
