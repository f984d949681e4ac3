#include "core/engine/startup_facts.h"

#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/status_macros.h"
#include "core/config/config_digest.h"
#include "core/engine/build_version.h"
#include "core/engine/compute_target.h"
#include "core/io/safetensors.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"

namespace ditserve::engine {
namespace {

namespace fs = std::filesystem;

void Add(v1::StartupFacts& facts, std::string name, std::string value) {
  v1::StartupFact* fact = facts.add_facts();
  fact->set_name(std::move(name));
  fact->set_value(std::move(value));
}

// Every int32 field of the config, so a degree added to the proto is agreed
// on without touching this file.
void AddParallelConfig(v1::StartupFacts& facts,
                       const v1::ParallelConfig& parallel) {
  const google::protobuf::Descriptor* descriptor = parallel.GetDescriptor();
  const google::protobuf::Reflection* reflection = parallel.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = descriptor->field(i);
    Add(facts, absl::StrCat("parallel.", field->name()),
        absl::StrCat(reflection->GetInt32(parallel, field)));
  }
}

// Relative paths of the safetensors files under `model_dir`, sorted. Linked
// folders are followed (a component linked in from elsewhere), each folder
// once: two links to a parent made the walk grow without end. An entry that
// cannot be resolved (a link to itself) is left out, for the loader to name.
absl::StatusOr<std::vector<std::string>> WeightFiles(
    const std::string& model_dir) {
  std::vector<std::string> files;
  std::error_code error;
  std::set<fs::path> folders_entered = {fs::canonical(model_dir, error)};
  fs::recursive_directory_iterator it(
      model_dir, fs::directory_options::follow_directory_symlink, error);
  for (; !error && it != fs::recursive_directory_iterator();
       it.increment(error)) {
    std::error_code unresolved;
    if (it->is_directory(unresolved)) {
      if (!folders_entered.insert(fs::canonical(it->path(), unresolved))
               .second ||
          unresolved) {
        it.disable_recursion_pending();
      }
      continue;
    }
    if (it->path().extension() == ".safetensors" &&
        it->is_regular_file(unresolved)) {
      files.push_back(it->path().lexically_relative(model_dir).string());
    }
  }
  if (error) {
    return absl::NotFoundError(absl::StrCat("cannot list the model folder ",
                                            model_dir, ": ", error.message()));
  }
  std::sort(files.begin(), files.end());
  return files;
}

// StableDigest of the relative path, name, dtype and shape of every tensor
// in the folder's safetensors files, as DigestHex.
absl::StatusOr<std::string> WeightsFingerprint(const std::string& model_dir) {
  ASSIGN_OR_RETURN(std::vector<std::string> files, WeightFiles(model_dir));
  std::string layout;
  for (const std::string& file : files) {
    ASSIGN_OR_RETURN(
        std::unique_ptr<io::SafetensorsFile> weights,
        io::SafetensorsFile::Open((fs::path(model_dir) / file).string()));
    for (const io::TensorInfo& tensor : weights->tensors()) {
      absl::StrAppend(&layout, file, "\t", tensor.name, "\t",
                      io::DTypeName(tensor.dtype), "\t",
                      absl::StrJoin(tensor.shape, "x"), "\n");
    }
  }
  return config::DigestHex(config::StableDigest(layout));
}

}  // namespace

absl::StatusOr<v1::StartupFacts> DescribeStartup(
    const v1::ParallelConfig& parallel,
    std::chrono::milliseconds collective_timeout, const config::ModelSpec& spec,
    const std::string& model_dir, const ComputeTarget& compute) {
  v1::StartupFacts facts;
  Add(facts, "build.ditserve", BuildVersion());
  Add(facts, "build.libtorch", TORCH_VERSION);
  Add(facts, "device", compute.device);
  Add(facts, "dtype", compute.dtype);
  AddParallelConfig(facts, parallel);
  Add(facts, "collective_timeout_s",
      absl::StrCat(std::chrono::duration<double>(collective_timeout).count()));
  Add(facts, "model.name", std::string(spec.defaults.name));
  const std::pair<const char*, int> dimensions[] = {
      {"num_attention_heads", spec.num_attention_heads},
      {"num_layers", spec.num_layers},
      {"patch_size", spec.patch_size},
      {"latent_channels", spec.latent_channels},
      {"vae_scale_factor", spec.vae_scale_factor},
      {"sample_size", spec.sample_size},
      {"temporal_compression", spec.temporal_compression},
      {"temporal_patch", spec.temporal_patch},
  };
  for (const auto& [name, value] : dimensions) {
    Add(facts, absl::StrCat("model.", name), absl::StrCat(value));
  }
  ASSIGN_OR_RETURN(std::string fingerprint, WeightsFingerprint(model_dir));
  Add(facts, "model.weights_fingerprint", std::move(fingerprint));
  return facts;
}

}  // namespace ditserve::engine
