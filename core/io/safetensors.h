#ifndef DITSERVE_CORE_IO_SAFETENSORS_H_
#define DITSERVE_CORE_IO_SAFETENSORS_H_

// Reading and writing the safetensors format: a little-endian u64 header
// length N, N bytes of JSON {name: {dtype, shape, data_offsets}, __metadata__},
// then the raw little-endian data. Files are memory-mapped read-only so a rank
// pays only for the pages of the tensors it actually loads.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ditserve::io {

enum class DType { kF32, kF16, kBF16, kF64, kI64, kI32, kI16, kI8, kU8, kBool };

// The format's name for a dtype ("F32", "BF16", ...).
absl::string_view DTypeName(DType dtype);
// Bytes per element.
int64_t DTypeSize(DType dtype);

struct TensorInfo {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin;  // Byte offsets relative to the start of the data section.
  uint64_t end;
};

using TensorMap = std::map<std::string, at::Tensor>;

class Mapping;

// One memory-mapped safetensors file. Open validates the whole header
// (length, JSON, dtypes, shapes against byte sizes, offsets inside the file,
// no overlaps), so Tensor() cannot fail on a file that opened except for an
// unknown name.
class SafetensorsFile {
 public:
  static absl::StatusOr<std::unique_ptr<SafetensorsFile>> Open(
      const std::string& path);

  const std::string& path() const { return path_; }
  // In data-offset order.
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const {
    return metadata_;
  }
  bool Contains(absl::string_view name) const;
  // nullptr when the file has no such tensor.
  const TensorInfo* Find(absl::string_view name) const;

  // A CPU tensor: a zero-copy view of the mapping when the data is aligned for
  // its dtype (the tensor keeps the mapping alive), else a copy. A view is
  // read-only memory, so writing into it faults: clone() before modifying.
  // Errors name the file and the tensor.
  absl::StatusOr<at::Tensor> Tensor(absl::string_view name) const;

  // Size of the mapping (the whole file).
  uint64_t mapped_bytes() const;
  // Bytes of the mapping this process has touched (its Rss in
  // /proc/self/smaps); nullopt where that is not available.
  std::optional<uint64_t> resident_bytes() const;

 private:
  SafetensorsFile() = default;

  std::string path_;
  std::shared_ptr<Mapping> mapping_;
  uint64_t data_start_ = 0;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t> index_by_name_;
  std::map<std::string, std::string> metadata_;
};

// The weights of one model component, from any of:
//   - a `.safetensors` file;
//   - a `*.safetensors.index.json` weight map (sharded checkpoint);
//   - a folder holding `diffusion_pytorch_model.safetensors` or
//     `model.safetensors`, or their `.index.json` sharded forms.
// Every tensor name must be unique across shards.
class CheckpointTensors {
 public:
  static absl::StatusOr<std::unique_ptr<CheckpointTensors>> Open(
      const std::string& path_or_dir);

  // What was opened (the file or index that Open resolved to).
  const std::string& path() const { return path_; }
  // Sorted.
  std::vector<std::string> names() const;
  bool Contains(absl::string_view name) const;
  // nullptr when no shard has the tensor.
  const TensorInfo* Find(absl::string_view name) const;
  absl::StatusOr<at::Tensor> Tensor(absl::string_view name) const;

  const std::vector<std::unique_ptr<SafetensorsFile>>& files() const {
    return files_;
  }
  // Sums over the shards.
  uint64_t mapped_bytes() const;
  std::optional<uint64_t> resident_bytes() const;

 private:
  CheckpointTensors() = default;

  std::string path_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const SafetensorsFile*> file_by_name_;
};

// Every tensor of one file, as writable copies (for inputs and references of
// tests and tools; weights go through CheckpointTensors and LoadStateDict).
absl::StatusOr<TensorMap> ReadAllTensors(const std::string& path);

// Writes contiguous little-endian copies of `tensors` (any device; dtypes of
// DType only) with `metadata` as __metadata__. Data is ordered by element
// size (largest first), then name, so every tensor is aligned to its element
// size and reads back zero-copy. The file is written under a temporary name
// and renamed into place.
absl::Status WriteSafetensors(
    const std::string& path, const TensorMap& tensors,
    const std::map<std::string, std::string>& metadata = {});

}  // namespace ditserve::io

#endif  // DITSERVE_CORE_IO_SAFETENSORS_H_
