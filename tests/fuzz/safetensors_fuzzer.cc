// SafetensorsFile::Open on arbitrary file contents. Open validates the whole
// header, so for a file that opens, every tensor it lists must read back,
// and its bytes must be the file's bytes at its data offsets.

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/io/safetensors.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/scratch_dir.h"

namespace ditserve {
namespace {

void FuzzOne(const uint8_t* data, size_t size) {
  static const std::string* path =
      new std::string(fuzz::ScratchDir() + "/input.safetensors");
  fuzz::WriteFileOrDie(*path, data, size);
  absl::StatusOr<std::unique_ptr<io::SafetensorsFile>> file =
      io::SafetensorsFile::Open(*path);
  if (!file.ok()) {
    FUZZ_CHECK(file.status().code() == absl::StatusCode::kInvalidArgument, "%s",
               file.status().ToString().c_str());
    return;
  }
  uint64_t header_size;
  std::memcpy(&header_size, data, sizeof(header_size));
  const uint8_t* data_section = data + sizeof(header_size) + header_size;
  for (const io::TensorInfo& info : (*file)->tensors()) {
    FUZZ_CHECK((*file)->Find(info.name) == &info, "Find(\"%s\")",
               info.name.c_str());
    absl::StatusOr<at::Tensor> tensor = (*file)->Tensor(info.name);
    FUZZ_CHECK(tensor.ok(), "%s", tensor.status().ToString().c_str());
    const uint64_t bytes = info.end - info.begin;
    FUZZ_CHECK(tensor->nbytes() == bytes, "tensor \"%s\" holds %zu bytes",
               info.name.c_str(), tensor->nbytes());
    if (bytes > 0) {
      FUZZ_CHECK(std::memcmp(tensor->data_ptr(), data_section + info.begin,
                             bytes) == 0,
                 "tensor \"%s\" differs from the file", info.name.c_str());
    }
  }
}

}  // namespace
}  // namespace ditserve

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ditserve::FuzzOne(data, size);
  return 0;
}
