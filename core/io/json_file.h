#ifndef DITSERVE_CORE_IO_JSON_FILE_H_
#define DITSERVE_CORE_IO_JSON_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace ditserve::io {

// Parses JSON as Python's json module writes it: the bare tokens NaN,
// Infinity and -Infinity (which diffusers writes, e.g. "lambda_min_clipped":
// -Infinity) become the strings "NaN", "Infinity" and "-Infinity";
// JsonNumber() reads them back as numbers. `source` names the text in errors.
absl::StatusOr<nlohmann::json> ParsePythonJson(absl::string_view text,
                                               absl::string_view source);

// Reads and parses a file with ParsePythonJson; errors name the path.
absl::StatusOr<nlohmann::json> ReadJsonFile(const std::string& path);

// A number, or one of the strings ParsePythonJson makes of NaN / ±Infinity.
absl::StatusOr<double> JsonNumber(const nlohmann::json& value);

}  // namespace ditserve::io

#endif  // DITSERVE_CORE_IO_JSON_FILE_H_
