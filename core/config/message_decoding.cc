#include "core/config/message_decoding.h"

#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/utf8.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/unknown_field_set.h"

namespace ditserve::config {
namespace {

using ::google::protobuf::Descriptor;
using ::google::protobuf::FieldDescriptor;
using ::google::protobuf::UnknownField;
using ::google::protobuf::UnknownFieldSet;

// The first length-delimited field of `fields` (read without a schema) that
// the schema `descriptor` cannot accept, described with its path.
std::optional<std::string> FindRejectedField(const UnknownFieldSet& fields,
                                             const Descriptor& descriptor,
                                             const std::string& prefix) {
  std::map<int, int> occurrences;
  for (int i = 0; i < fields.field_count(); ++i) {
    const UnknownField& field = fields.field(i);
    const int index = occurrences[field.number()]++;
    const FieldDescriptor* schema =
        descriptor.FindFieldByNumber(field.number());
    if (schema == nullptr ||
        field.type() != UnknownField::TYPE_LENGTH_DELIMITED) {
      continue;
    }
    const std::string path = absl::StrCat(
        prefix, schema->name(),
        schema->is_repeated() ? absl::StrCat("[", index, "]") : "");
    if (schema->type() == FieldDescriptor::TYPE_STRING) {
      if (absl::Status utf8 = base::CheckUtf8(path, field.length_delimited());
          !utf8.ok()) {
        return absl::StrCat(utf8.message(), "; string fields must be UTF-8");
      }
    } else if (schema->type() == FieldDescriptor::TYPE_MESSAGE) {
      UnknownFieldSet nested;
      if (!nested.ParseFromString(field.length_delimited())) {
        return absl::StrCat(path, " is not a valid ",
                            schema->message_type()->name(), " encoding");
      }
      if (std::optional<std::string> rejected = FindRejectedField(
              nested, *schema->message_type(), absl::StrCat(path, "."))) {
        return rejected;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

absl::Status ParseRequest(absl::string_view bytes,
                          google::protobuf::Message& message) {
  const std::string type = message.GetDescriptor()->name();
  // Checked before parsing so that protobuf's own parser, which logs every
  // invalid string it meets, only ever sees well-formed input.
  UnknownFieldSet fields;
  if (!fields.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the request is not a valid ", type,
        ": its bytes are not a protobuf encoding (truncated or corrupt)"));
  }
  if (std::optional<std::string> rejected =
          FindRejectedField(fields, *message.GetDescriptor(), "")) {
    return absl::InvalidArgumentError(
        absl::StrCat("the request is not a valid ", type, ": ", *rejected));
  }
  if (!message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        absl::StrCat("the request bytes do not parse as a ", type));
  }
  return absl::OkStatus();
}

}  // namespace ditserve::config
