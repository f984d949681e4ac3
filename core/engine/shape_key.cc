#include "core/engine/shape_key.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace ditserve::engine {
namespace {

using Fields = std::vector<std::pair<std::string, int64_t>>;

// Appends every integer and bool field of `message` as "<prefix>.<name>"
// (repeated fields as "<name>[i]" plus "<name> count"), so new derived
// shapes join the key without touching this file.
void AppendScalarFields(const google::protobuf::Message& message,
                        const std::string& prefix, Fields& fields) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Descriptor* descriptor = message.GetDescriptor();
  const google::protobuf::Reflection* reflection = message.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    const std::string name = absl::StrCat(prefix, ".", field->name());
    if (field->is_repeated()) {
      if (field->cpp_type() != FieldDescriptor::CPPTYPE_INT32) continue;
      const int size = reflection->FieldSize(message, field);
      fields.emplace_back(absl::StrCat(name, " count"), size);
      for (int index = 0; index < size; ++index) {
        fields.emplace_back(
            absl::StrCat(name, "[", index, "]"),
            reflection->GetRepeatedInt32(message, field, index));
      }
      continue;
    }
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
        fields.emplace_back(name, reflection->GetInt32(message, field));
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        fields.emplace_back(name, reflection->GetInt64(message, field));
        break;
      case FieldDescriptor::CPPTYPE_BOOL:
        fields.emplace_back(name, reflection->GetBool(message, field) ? 1 : 0);
        break;
      default:
        break;
    }
  }
}

}  // namespace

ShapeKey ShapeKey::Of(const v1::InputConfig& config) {
  ShapeKey key;
  key.fields_ = {
      {"height", config.height()},
      {"width", config.width()},
      {"num_frames", config.num_frames()},
      {"prompt count", config.prompt_size()},
      {"max_sequence_length", config.max_sequence_length()},
      {"do_classifier_free_guidance",
       config.do_classifier_free_guidance() ? 1 : 0},
  };
  AppendScalarFields(config.parallel(), "parallel", key.fields_);
  AppendScalarFields(config.shapes(), "shapes", key.fields_);
  return key;
}

std::vector<std::string> ShapeKey::DifferingFields(
    const ShapeKey& other) const {
  std::map<std::string, int64_t> theirs(other.fields_.begin(),
                                        other.fields_.end());
  std::vector<std::string> differing;
  for (const auto& [name, value] : fields_) {
    auto found = theirs.find(name);
    if (found == theirs.end()) {
      differing.push_back(absl::StrCat(name, " ", value, " → (absent)"));
    } else if (found->second != value) {
      differing.push_back(absl::StrCat(name, " ", value, " → ", found->second));
    }
    if (found != theirs.end()) theirs.erase(found);
  }
  for (const auto& [name, value] : theirs) {
    differing.push_back(absl::StrCat(name, " (absent) → ", value));
  }
  return differing;
}

}  // namespace ditserve::engine
