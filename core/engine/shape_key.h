#ifndef DITSERVE_CORE_ENGINE_SHAPE_KEY_H_
#define DITSERVE_CORE_ENGINE_SHAPE_KEY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ditserve/v1/input_config.pb.h"

namespace ditserve::engine {

// The fields of an InputConfig that determine buffer shapes, by name: the
// request's size, frame and prompt counts, text length and guidance, every
// field of the parallel config and of the derived shapes. Two configs with
// equal keys fit the same buffers.
class ShapeKey {
 public:
  static ShapeKey Of(const v1::InputConfig& config);

  bool operator==(const ShapeKey& other) const {
    return fields_ == other.fields_;
  }
  bool operator!=(const ShapeKey& other) const { return !(*this == other); }

  // One entry per field whose value differs, e.g.
  // "max_sequence_length 256 → 512" (this key's value first).
  std::vector<std::string> DifferingFields(const ShapeKey& other) const;

  const std::vector<std::pair<std::string, int64_t>>& fields() const {
    return fields_;
  }

 private:
  std::vector<std::pair<std::string, int64_t>> fields_;
};

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_SHAPE_KEY_H_
