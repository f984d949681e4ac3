// CheckpointTensors::Open on an arbitrary `model.safetensors.index.json`
// beside two valid shards (s1.safetensors holds "a" and "b", s2.safetensors
// holds "c"). A checkpoint that opens must read back every name it lists.

#include <ATen/ATen.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/io/safetensors.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/scratch_dir.h"

namespace ditserve {
namespace {

// Writes the shards once; returns the index path inputs are written to.
const std::string& IndexPath() {
  static const std::string* path = [] {
    const std::string& dir = fuzz::ScratchDir();
    const absl::Status s1 =
        io::WriteSafetensors(dir + "/s1.safetensors",
                             {{"a", at::arange(6, at::kFloat).reshape({2, 3})},
                              {"b", at::ones({4}, at::kBFloat16)}});
    FUZZ_CHECK(s1.ok(), "%s", s1.ToString().c_str());
    const absl::Status s2 = io::WriteSafetensors(
        dir + "/s2.safetensors", {{"c", at::zeros({3}, at::kLong)}});
    FUZZ_CHECK(s2.ok(), "%s", s2.ToString().c_str());
    return new std::string(dir + "/model.safetensors.index.json");
  }();
  return *path;
}

void FuzzOne(const uint8_t* data, size_t size) {
  fuzz::WriteFileOrDie(IndexPath(), data, size);
  absl::StatusOr<std::unique_ptr<io::CheckpointTensors>> checkpoint =
      io::CheckpointTensors::Open(IndexPath());
  if (!checkpoint.ok()) return;
  for (const std::string& name : (*checkpoint)->names()) {
    FUZZ_CHECK((*checkpoint)->Find(name) != nullptr, "Find(\"%s\")",
               name.c_str());
    absl::StatusOr<at::Tensor> tensor = (*checkpoint)->Tensor(name);
    FUZZ_CHECK(tensor.ok(), "%s", tensor.status().ToString().c_str());
  }
}

}  // namespace
}  // namespace ditserve

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ditserve::FuzzOne(data, size);
  return 0;
}
