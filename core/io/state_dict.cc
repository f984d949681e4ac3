#include "core/io/state_dict.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"

namespace ditserve::io {
namespace {

// Long lists (a wrong checkpoint for the model) are cut after this many
// names so the error stays readable.
constexpr size_t kMaxListedNames = 20;

std::string ListNames(const std::vector<std::string>& names) {
  std::string text = absl::StrJoin(
      names.begin(), names.begin() + std::min(names.size(), kMaxListedNames),
      ", ");
  if (names.size() > kMaxListedNames) {
    absl::StrAppend(&text, ", and ", names.size() - kMaxListedNames, " more");
  }
  return text;
}

bool IsFloating(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 ||
         dtype == DType::kBF16 || dtype == DType::kF64;
}

bool Contains(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

std::string ShapeString(c10::IntArrayRef shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

}  // namespace

absl::StatusOr<LoadReport> LoadStateDict(torch::nn::Module& module,
                                         const CheckpointTensors& source,
                                         const LoadOptions& options) {
  auto selected = [&](const std::string& name) {
    return !options.include || options.include(name);
  };
  // Module name -> the tensor to fill.
  std::map<std::string, at::Tensor> targets;
  for (const auto& item : module.named_parameters(/*recurse=*/true)) {
    if (selected(item.key())) targets[item.key()] = item.value();
  }
  for (const auto& item : module.named_buffers(/*recurse=*/true)) {
    if (selected(item.key())) targets[item.key()] = item.value();
  }

  // Module name -> checkpoint name.
  std::map<std::string, std::string> sources;
  std::vector<std::string> unexpected;
  for (const std::string& checkpoint_name : source.names()) {
    if (!absl::StartsWith(checkpoint_name, options.strip_prefix)) continue;
    std::string name = checkpoint_name.substr(options.strip_prefix.size());
    if (!selected(name)) continue;
    if (targets.count(name) > 0) {
      sources[name] = checkpoint_name;
    } else if (!Contains(options.allow_unexpected, name)) {
      unexpected.push_back(checkpoint_name);
    }
  }

  std::vector<std::string> missing;
  std::vector<std::string> misshaped;
  // Integers or booleans where the module holds a floating-point tensor:
  // a cast would load them as weights without a word.
  std::vector<std::string> mistyped;
  for (const auto& [name, target] : targets) {
    auto it = sources.find(name);
    if (it == sources.end()) {
      missing.push_back(name);
      continue;
    }
    const TensorInfo* info = source.Find(it->second);
    if (c10::IntArrayRef(info->shape) != target.sizes()) {
      misshaped.push_back(absl::StrCat(name, " (checkpoint ",
                                       ShapeString(info->shape), ", module ",
                                       ShapeString(target.sizes()), ")"));
    }
    if (target.is_floating_point() && !IsFloating(info->dtype)) {
      mistyped.push_back(
          absl::StrCat(name, " (checkpoint ", DTypeName(info->dtype),
                       ", module ", c10::toString(target.scalar_type()), ")"));
    }
  }
  if (!missing.empty() || !unexpected.empty() || !misshaped.empty() ||
      !mistyped.empty()) {
    std::vector<std::string> problems;
    if (!missing.empty()) {
      problems.push_back(
          absl::StrCat(missing.size(), " missing: ", ListNames(missing)));
    }
    if (!unexpected.empty()) {
      problems.push_back(absl::StrCat(unexpected.size(),
                                      " unexpected: ", ListNames(unexpected)));
    }
    if (!misshaped.empty()) {
      problems.push_back(absl::StrCat(
          misshaped.size(), " wrongly shaped: ", ListNames(misshaped)));
    }
    if (!mistyped.empty()) {
      problems.push_back(absl::StrCat(
          mistyped.size(), " not floating point: ", ListNames(mistyped)));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("checkpoint ", source.path(),
                     " does not match the "
                     "module: ",
                     absl::StrJoin(problems, "; ")));
  }

  LoadReport report;
  report.bytes_mapped = source.mapped_bytes();
  torch::NoGradGuard no_grad;
  for (const auto& [name, checkpoint_name] : sources) {
    ASSIGN_OR_RETURN(at::Tensor tensor, source.Tensor(checkpoint_name));
    at::Tensor& target = targets.at(name);
    RETURN_IF_ERROR(base::Guarded(
        absl::StrCat("checkpoint ", source.path(), ": copying tensor \"",
                     checkpoint_name, "\" failed"),
        [&] { target.copy_(tensor); }));
    ++report.tensors_loaded;
    report.bytes_loaded += target.nbytes();
  }
  report.bytes_resident = source.resident_bytes().value_or(0);
  spdlog::info(
      "loaded {} tensors ({} bytes) from {} ({} bytes mapped, {} resident)",
      report.tensors_loaded, report.bytes_loaded, source.path(),
      report.bytes_mapped, report.bytes_resident);
  return report;
}

}  // namespace ditserve::io
