#include "core/io/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/guarded.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian; views assume a "
              "little-endian host");

namespace ditserve::io {

// A read-only mapping of a whole file. Read-only matters: a writable private
// mapping is charged in full against the kernel's commit limit, which is how
// loading a 10 GB checkpoint fails with "Unable to mmap" on hosts with strict
// overcommit; a read-only one costs only the pages actually touched.
class Mapping {
 public:
  static absl::StatusOr<std::shared_ptr<Mapping>> Map(const std::string& path) {
    // Non-blocking, so that a FIFO in a file's place is refused below
    // instead of waiting for a writer for ever.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      return absl::NotFoundError(absl::StrCat(
          "cannot open safetensors file ", path, ": ", std::strerror(errno)));
    }
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      int err = errno;
      ::close(fd);
      return absl::InternalError(
          absl::StrCat("cannot stat ", path, ": ", std::strerror(err)));
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      return absl::InvalidArgumentError(
          absl::StrCat(path, " is not a regular file"));
    }
    auto mapping = std::shared_ptr<Mapping>(new Mapping());
    mapping->size_ = static_cast<uint64_t>(st.st_size);
    if (mapping->size_ > 0) {
      void* data =
          ::mmap(nullptr, mapping->size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (data == MAP_FAILED) {
        int err = errno;
        ::close(fd);
        return absl::ResourceExhaustedError(
            absl::StrCat("cannot mmap ", mapping->size_, " bytes of ", path,
                         ": ", std::strerror(err)));
      }
      mapping->data_ = static_cast<uint8_t*>(data);
    }
    ::close(fd);  // The mapping stays valid without the descriptor.
    return mapping;
  }

  ~Mapping() {
    if (data_ != nullptr) ::munmap(data_, size_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }

  // The "Rss:" of this mapping in /proc/self/smaps: pages this process has
  // faulted in, which is what a rank that loads a subset of layers pays.
  std::optional<uint64_t> ResidentBytes() const {
    if (data_ == nullptr) return 0;
    std::ifstream smaps("/proc/self/smaps");
    if (!smaps) return std::nullopt;
    const uintptr_t start = reinterpret_cast<uintptr_t>(data_);
    std::string line;
    bool in_mapping = false;
    while (std::getline(smaps, line)) {
      if (!in_mapping) {
        // Region header: "start-end perms offset dev inode path".
        in_mapping = std::strtoull(line.c_str(), nullptr, 16) == start &&
                     line.find('-') != std::string::npos;
        continue;
      }
      if (absl::StartsWith(line, "Rss:")) {
        return std::strtoull(line.c_str() + 4, nullptr, 10) * 1024;
      }
    }
    return std::nullopt;
  }

 private:
  Mapping() = default;

  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

namespace {

// The reference implementation refuses larger headers too.
constexpr uint64_t kMaxHeaderBytes = 100 << 20;

constexpr std::pair<DType, const char*> kDTypeNames[] = {
    {DType::kF32, "F32"},  {DType::kF16, "F16"}, {DType::kBF16, "BF16"},
    {DType::kF64, "F64"},  {DType::kI64, "I64"}, {DType::kI32, "I32"},
    {DType::kI16, "I16"},  {DType::kI8, "I8"},   {DType::kU8, "U8"},
    {DType::kBool, "BOOL"}};

absl::StatusOr<DType> ParseDType(const std::string& name) {
  for (const auto& [dtype, text] : kDTypeNames) {
    if (name == text) return dtype;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unsupported dtype \"", name,
      "\" (expected one of F32, F16, BF16, F64, I64, I32, I16, I8, U8, BOOL)"));
}

at::ScalarType ToScalarType(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return at::kFloat;
    case DType::kF16:
      return at::kHalf;
    case DType::kBF16:
      return at::kBFloat16;
    case DType::kF64:
      return at::kDouble;
    case DType::kI64:
      return at::kLong;
    case DType::kI32:
      return at::kInt;
    case DType::kI16:
      return at::kShort;
    case DType::kI8:
      return at::kChar;
    case DType::kU8:
      return at::kByte;
    case DType::kBool:
      return at::kBool;
  }
  return at::kFloat;
}

absl::StatusOr<DType> FromScalarType(at::ScalarType type) {
  for (const auto& [dtype, text] : kDTypeNames) {
    if (ToScalarType(dtype) == type) return dtype;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "dtype ", c10::toString(type), " cannot be stored in safetensors"));
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// Parses one tensor entry of the header; `data_size` bounds the offsets.
absl::StatusOr<TensorInfo> ParseTensorInfo(const std::string& name,
                                           const nlohmann::json& entry,
                                           uint64_t data_size) {
  auto bad = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor \"", name, "\": ", what));
  };
  if (!entry.is_object()) return bad("header entry is not a JSON object");
  auto dtype_it = entry.find("dtype");
  auto shape_it = entry.find("shape");
  auto offsets_it = entry.find("data_offsets");
  if (dtype_it == entry.end() || !dtype_it->is_string()) {
    return bad("missing string field \"dtype\"");
  }
  if (shape_it == entry.end() || !shape_it->is_array()) {
    return bad("missing array field \"shape\"");
  }
  if (offsets_it == entry.end() || !offsets_it->is_array() ||
      offsets_it->size() != 2 || !(*offsets_it)[0].is_number_unsigned() ||
      !(*offsets_it)[1].is_number_unsigned()) {
    return bad("\"data_offsets\" must be two non-negative integers");
  }
  TensorInfo info;
  info.name = name;
  absl::StatusOr<DType> dtype = ParseDType(dtype_it->get<std::string>());
  if (!dtype.ok()) return bad(dtype.status().message());
  info.dtype = *dtype;

  // numel is bounded by the data size, which also rules out overflow.
  uint64_t numel = 1;
  for (const auto& dim : *shape_it) {
    if (!dim.is_number_unsigned()) {
      return bad(absl::StrCat("shape ", shape_it->dump(),
                              " has an entry that is not a non-negative "
                              "integer"));
    }
    uint64_t d = dim.get<uint64_t>();
    info.shape.push_back(static_cast<int64_t>(d));
    if (d != 0 && numel > data_size / d) {
      numel = data_size + 1;  // Saturates: more than the file can hold.
    } else {
      numel *= d;
    }
  }
  info.begin = (*offsets_it)[0].get<uint64_t>();
  info.end = (*offsets_it)[1].get<uint64_t>();
  if (info.begin > info.end) {
    return bad(absl::StrCat("data_offsets [", info.begin, ", ", info.end,
                            "] end before they begin"));
  }
  if (info.end > data_size) {
    return bad(absl::StrCat("data_offsets [", info.begin, ", ", info.end,
                            "] lie outside the data section of ", data_size,
                            " bytes"));
  }
  uint64_t expected = numel * static_cast<uint64_t>(DTypeSize(info.dtype));
  if (numel > data_size || info.end - info.begin != expected) {
    return bad(absl::StrCat(
        "shape ", ShapeString(info.shape), " of ", DTypeName(info.dtype),
        " needs ",
        numel > data_size ? "more than the file's" : absl::StrCat(expected),
        " bytes but data_offsets [", info.begin, ", ", info.end, "] hold ",
        info.end - info.begin));
  }
  return info;
}

absl::Status WithFile(const std::string& path, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("safetensors file ", path,
                                                  ": ", status.message()));
}

}  // namespace

absl::string_view DTypeName(DType dtype) {
  for (const auto& [d, text] : kDTypeNames) {
    if (d == dtype) return text;
  }
  return "?";
}

int64_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kF64:
    case DType::kI64:
      return 8;
    case DType::kF32:
    case DType::kI32:
      return 4;
    case DType::kF16:
    case DType::kBF16:
    case DType::kI16:
      return 2;
    case DType::kI8:
    case DType::kU8:
    case DType::kBool:
      return 1;
  }
  return 1;
}

absl::StatusOr<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(
    const std::string& path) {
  ASSIGN_OR_RETURN(std::shared_ptr<Mapping> mapping, Mapping::Map(path));
  const uint64_t file_size = mapping->size();
  auto invalid = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("safetensors file ", path, ": ", what));
  };
  if (file_size < 8) {
    return invalid(absl::StrCat("truncated: ", file_size,
                                " bytes, shorter than the 8-byte header "
                                "length"));
  }
  uint64_t header_size;
  std::memcpy(&header_size, mapping->data(), sizeof(header_size));
  if (header_size > file_size - 8) {
    return invalid(absl::StrCat("header length ", header_size,
                                " runs past the end of the file (",
                                file_size - 8, " bytes after the length)"));
  }
  if (header_size > kMaxHeaderBytes) {
    return invalid(absl::StrCat("header length ", header_size,
                                " exceeds the limit of ", kMaxHeaderBytes));
  }
  const char* header_begin = reinterpret_cast<const char*>(mapping->data()) + 8;
  absl::StatusOr<nlohmann::json> parsed = base::ParsePythonJson(
      absl::string_view(header_begin, header_size), "header");
  if (!parsed.ok()) return invalid(parsed.status().message());
  const nlohmann::json header = *std::move(parsed);
  if (!header.is_object()) return invalid("header is not a JSON object");

  auto file = std::unique_ptr<SafetensorsFile>(new SafetensorsFile());
  file->path_ = path;
  file->mapping_ = std::move(mapping);
  file->data_start_ = 8 + header_size;
  const uint64_t data_size = file_size - file->data_start_;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) return invalid("__metadata__ is not an object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) {
          return invalid(
              absl::StrCat("__metadata__ \"", key, "\" is not a string"));
        }
        file->metadata_[key] = value.get<std::string>();
      }
      continue;
    }
    absl::StatusOr<TensorInfo> info = ParseTensorInfo(name, entry, data_size);
    if (!info.ok()) return WithFile(path, info.status());
    file->tensors_.push_back(*std::move(info));
  }
  std::sort(file->tensors_.begin(), file->tensors_.end(),
            [](const TensorInfo& a, const TensorInfo& b) {
              return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
            });
  for (size_t i = 1; i < file->tensors_.size(); ++i) {
    const TensorInfo& prev = file->tensors_[i - 1];
    const TensorInfo& cur = file->tensors_[i];
    if (cur.begin < prev.end) {
      return invalid(absl::StrCat("tensor \"", cur.name, "\" at [", cur.begin,
                                  ", ", cur.end, ") overlaps tensor \"",
                                  prev.name, "\" at [", prev.begin, ", ",
                                  prev.end, ")"));
    }
  }
  for (size_t i = 0; i < file->tensors_.size(); ++i) {
    file->index_by_name_[file->tensors_[i].name] = i;
  }
  return file;
}

bool SafetensorsFile::Contains(absl::string_view name) const {
  return Find(name) != nullptr;
}

const TensorInfo* SafetensorsFile::Find(absl::string_view name) const {
  auto it = index_by_name_.find(std::string(name));
  return it == index_by_name_.end() ? nullptr : &tensors_[it->second];
}

absl::StatusOr<at::Tensor> SafetensorsFile::Tensor(
    absl::string_view name) const {
  const TensorInfo* info = Find(name);
  if (info == nullptr) {
    return absl::NotFoundError(absl::StrCat("safetensors file ", path_,
                                            " has no tensor \"", name, "\""));
  }
  return base::Guarded(
      absl::StrCat("safetensors file ", path_, ", tensor \"", name, "\""),
      [&]() -> at::Tensor {
        uint8_t* data = mapping_->data() + data_start_ + info->begin;
        const auto options =
            at::TensorOptions().dtype(ToScalarType(info->dtype));
        const auto element_size =
            static_cast<uintptr_t>(DTypeSize(info->dtype));
        if (info->begin == info->end) return torch::empty(info->shape, options);
        if (reinterpret_cast<uintptr_t>(data) % element_size == 0) {
          std::shared_ptr<Mapping> keep_alive = mapping_;
          return torch::from_blob(
              data, info->shape, [keep_alive](void*) {}, options);
        }
        at::Tensor copy = torch::empty(info->shape, options);
        std::memcpy(copy.data_ptr(), data, info->end - info->begin);
        return copy;
      });
}

uint64_t SafetensorsFile::mapped_bytes() const { return mapping_->size(); }

std::optional<uint64_t> SafetensorsFile::resident_bytes() const {
  return mapping_->ResidentBytes();
}

namespace {

constexpr const char* kComponentFiles[] = {
    "diffusion_pytorch_model.safetensors",
    "model.safetensors",
    "diffusion_pytorch_model.safetensors.index.json",
    "model.safetensors.index.json",
};

absl::StatusOr<std::string> ResolveCheckpointPath(
    const std::string& path_or_dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path_or_dir, ec)) {
    if (!std::filesystem::exists(path_or_dir, ec)) {
      return absl::NotFoundError(
          absl::StrCat("checkpoint ", path_or_dir, " does not exist"));
    }
    return path_or_dir;
  }
  for (const char* name : kComponentFiles) {
    std::filesystem::path candidate = std::filesystem::path(path_or_dir) / name;
    if (std::filesystem::exists(candidate, ec)) return candidate.string();
  }
  return absl::NotFoundError(
      absl::StrCat("checkpoint folder ", path_or_dir, " holds none of ",
                   absl::StrJoin(kComponentFiles, ", ")));
}

// Shard file names of a `*.safetensors.index.json`, in order of first use.
absl::StatusOr<std::vector<std::string>> ReadShardNames(
    const std::string& index_path,
    std::map<std::string, std::string>* shard_by_tensor) {
  ASSIGN_OR_RETURN(const nlohmann::json index, base::ReadJsonFile(index_path));
  auto map_it = index.find("weight_map");
  if (!index.is_object() || map_it == index.end() || !map_it->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "weight index ", index_path, " has no \"weight_map\" object"));
  }
  std::vector<std::string> shards;
  for (const auto& [tensor, shard] : map_it->items()) {
    if (!shard.is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat("weight index ", index_path, ": entry for tensor \"",
                       tensor, "\" is not a file name"));
    }
    const std::string& file = shard.get_ref<const std::string&>();
    if (file.find('/') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "weight index ", index_path, ": shard \"", file, "\" of tensor \"",
          tensor, "\" must be a file name in the index's folder"));
    }
    (*shard_by_tensor)[tensor] = file;
    if (std::find(shards.begin(), shards.end(), file) == shards.end()) {
      shards.push_back(file);
    }
  }
  return shards;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CheckpointTensors>> CheckpointTensors::Open(
    const std::string& path_or_dir) {
  ASSIGN_OR_RETURN(std::string path, ResolveCheckpointPath(path_or_dir));
  auto checkpoint = std::unique_ptr<CheckpointTensors>(new CheckpointTensors());
  checkpoint->path_ = path;

  if (!absl::EndsWith(path, ".index.json")) {
    ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> file,
                     SafetensorsFile::Open(path));
    for (const TensorInfo& info : file->tensors()) {
      checkpoint->file_by_name_[info.name] = file.get();
    }
    checkpoint->files_.push_back(std::move(file));
    return checkpoint;
  }

  std::map<std::string, std::string> shard_by_tensor;
  ASSIGN_OR_RETURN(std::vector<std::string> shards,
                   ReadShardNames(path, &shard_by_tensor));
  const std::filesystem::path folder =
      std::filesystem::path(path).parent_path();
  std::map<std::string, const SafetensorsFile*> file_by_shard;
  for (const std::string& shard : shards) {
    ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> file,
                     SafetensorsFile::Open((folder / shard).string()));
    for (const TensorInfo& info : file->tensors()) {
      auto [it, inserted] =
          checkpoint->file_by_name_.emplace(info.name, file.get());
      if (!inserted) {
        return absl::InvalidArgumentError(
            absl::StrCat("sharded checkpoint ", path, ": tensor \"", info.name,
                         "\" is stored in both ", it->second->path(), " and ",
                         file->path()));
      }
    }
    file_by_shard[shard] = file.get();
    checkpoint->files_.push_back(std::move(file));
  }
  for (const auto& [tensor, shard] : shard_by_tensor) {
    if (!file_by_shard.at(shard)->Contains(tensor)) {
      return absl::InvalidArgumentError(
          absl::StrCat("sharded checkpoint ", path, ": weight_map puts \"",
                       tensor, "\" in ", shard, ", which has no such tensor"));
    }
  }
  return checkpoint;
}

std::vector<std::string> CheckpointTensors::names() const {
  std::vector<std::string> result;
  result.reserve(file_by_name_.size());
  for (const auto& [name, file] : file_by_name_) result.push_back(name);
  return result;
}

bool CheckpointTensors::Contains(absl::string_view name) const {
  return file_by_name_.count(std::string(name)) > 0;
}

const TensorInfo* CheckpointTensors::Find(absl::string_view name) const {
  auto it = file_by_name_.find(std::string(name));
  return it == file_by_name_.end() ? nullptr : it->second->Find(name);
}

absl::StatusOr<at::Tensor> CheckpointTensors::Tensor(
    absl::string_view name) const {
  auto it = file_by_name_.find(std::string(name));
  if (it == file_by_name_.end()) {
    return absl::NotFoundError(
        absl::StrCat("checkpoint ", path_, " has no tensor \"", name, "\""));
  }
  return it->second->Tensor(name);
}

uint64_t CheckpointTensors::mapped_bytes() const {
  uint64_t total = 0;
  for (const auto& file : files_) total += file->mapped_bytes();
  return total;
}

std::optional<uint64_t> CheckpointTensors::resident_bytes() const {
  uint64_t total = 0;
  for (const auto& file : files_) {
    std::optional<uint64_t> resident = file->resident_bytes();
    if (!resident.has_value()) return std::nullopt;
    total += *resident;
  }
  return total;
}

absl::StatusOr<TensorMap> ReadAllTensors(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> file,
                   SafetensorsFile::Open(path));
  TensorMap tensors;
  for (const TensorInfo& info : file->tensors()) {
    ASSIGN_OR_RETURN(at::Tensor tensor, file->Tensor(info.name));
    RETURN_IF_ERROR(base::GuardedAs(
        absl::StatusCode::kResourceExhausted,
        absl::StrCat("copying tensor \"", info.name, "\" of ", path),
        [&] { tensors[info.name] = tensor.clone(); }));
  }
  return tensors;
}

absl::Status WriteSafetensors(
    const std::string& path, const TensorMap& tensors,
    const std::map<std::string, std::string>& metadata) {
  struct Entry {
    std::string name;
    DType dtype;
    at::Tensor data;  // Contiguous, on the CPU.
  };
  std::vector<Entry> entries;
  RETURN_IF_ERROR(
      base::Guarded(absl::StrCat("cannot write ", path), [&]() -> absl::Status {
        for (const auto& [name, tensor] : tensors) {
          if (name == "__metadata__") {
            return absl::InvalidArgumentError(absl::StrCat(
                "cannot write ", path,
                ": \"__metadata__\" is reserved, not a tensor name"));
          }
          if (!tensor.defined()) {
            return absl::InvalidArgumentError(absl::StrCat(
                "cannot write ", path, ": tensor \"", name, "\" is undefined"));
          }
          absl::StatusOr<DType> dtype = FromScalarType(tensor.scalar_type());
          if (!dtype.ok()) {
            return absl::InvalidArgumentError(
                absl::StrCat("cannot write ", path, ": tensor \"", name,
                             "\": ", dtype.status().message()));
          }
          entries.push_back(
              {name, *dtype, tensor.detach().to(at::kCPU).contiguous()});
        }
        return absl::OkStatus();
      }));
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) {
                     return DTypeSize(a.dtype) > DTypeSize(b.dtype);
                   });

  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (const Entry& entry : entries) {
    const uint64_t bytes = entry.data.nbytes();
    header[entry.name] = {{"dtype", std::string(DTypeName(entry.dtype))},
                          {"shape", entry.data.sizes().vec()},
                          {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string header_text = header.dump();
  // Padding keeps the data section 8-byte aligned, so views need no copy.
  header_text.append((8 - header_text.size() % 8) % 8, ' ');

  const std::string temp_path = path + ".tmp";
  {
    std::ofstream out(temp_path, std::ios::binary | std::ios::trunc);
    if (!out) {
      return absl::PermissionDeniedError(absl::StrCat(
          "cannot create ", temp_path, ": ", std::strerror(errno)));
    }
    const uint64_t header_size = header_text.size();
    out.write(reinterpret_cast<const char*>(&header_size), sizeof(header_size));
    out.write(header_text.data(), header_text.size());
    for (const Entry& entry : entries) {
      out.write(static_cast<const char*>(entry.data.data_ptr()),
                entry.data.nbytes());
    }
    out.close();
    if (!out) {
      std::remove(temp_path.c_str());
      return absl::DataLossError(absl::StrCat(
          "writing ", temp_path, " failed: ", std::strerror(errno)));
    }
  }
  if (std::rename(temp_path.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(temp_path.c_str());
    return absl::InternalError(absl::StrCat("cannot rename ", temp_path, " to ",
                                            path, ": ", std::strerror(err)));
  }
  return absl::OkStatus();
}

}  // namespace ditserve::io
