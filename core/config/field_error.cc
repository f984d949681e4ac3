#include "core/config/field_error.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/types/optional.h"

namespace ditserve::config {
namespace {

constexpr char kFieldsPayloadUrl[] = "type.ditserve.dev/request-fields";

}  // namespace

absl::Status WithFields(absl::Status status,
                        std::initializer_list<absl::string_view> fields) {
  status.SetPayload(kFieldsPayloadUrl, absl::Cord(absl::StrJoin(fields, ",")));
  return status;
}

absl::Status InvalidField(absl::string_view field, absl::string_view message) {
  return WithFields(absl::InvalidArgumentError(message), {field});
}

std::vector<std::string> ErrorFields(const absl::Status& status) {
  absl::optional<absl::Cord> fields = status.GetPayload(kFieldsPayloadUrl);
  if (!fields.has_value()) return {};
  return absl::StrSplit(std::string(*fields), ',');
}

}  // namespace ditserve::config
