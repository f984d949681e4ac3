#ifndef DITSERVE_CORE_IO_STATE_DICT_H_
#define DITSERVE_CORE_IO_STATE_DICT_H_

// Strict loading of checkpoint tensors into a torch::nn::Module by name: the
// diffusers / transformers parameter names are the module paths, so there is
// no conversion table.

#include <torch/nn/module.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/io/safetensors.h"

namespace ditserve::io {

struct LoadOptions {
  // Selects the names (module parameter / buffer names, i.e. checkpoint names
  // after `strip_prefix`) this call loads; names it rejects are neither
  // loaded nor reported missing or unexpected, so a PipeFusion stage can load
  // only its own layers. Empty = every name.
  std::function<bool(absl::string_view)> include;
  // Checkpoint names must start with this prefix, which is removed before
  // matching ("text_model." style containers); other names are ignored.
  std::string strip_prefix;
  // Checkpoint names with no module counterpart that are not an error
  // (e.g. tied weights stored twice).
  std::vector<std::string> allow_unexpected;
};

struct LoadReport {
  int64_t tensors_loaded = 0;
  // Bytes written into the module (in the module's dtype).
  uint64_t bytes_loaded = 0;
  // Bytes of the checkpoint files mapped (all shards, loaded or not).
  uint64_t bytes_mapped = 0;
  // Of those, the bytes this process has touched after loading (0 where
  // /proc/self/smaps is not available).
  uint64_t bytes_resident = 0;
};

// Copies every selected checkpoint tensor into the module parameter or buffer
// of the same name, converting to that tensor's dtype and device. Missing,
// unexpected and wrongly shaped tensors are ALL listed in one INVALID_ARGUMENT
// error naming the checkpoint; nothing is copied unless every check passes.
// Logs the tensors, bytes loaded, mapped and resident (spdlog, info).
absl::StatusOr<LoadReport> LoadStateDict(torch::nn::Module& module,
                                         const CheckpointTensors& source,
                                         const LoadOptions& options = {});

}  // namespace ditserve::io

#endif  // DITSERVE_CORE_IO_STATE_DICT_H_
