#ifndef DITSERVE_CORE_SCHEDULERS_SCHEDULER_CONFIG_H_
#define DITSERVE_CORE_SCHEDULERS_SCHEDULER_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace ditserve::schedulers {

// Reads `scheduler_config.json` from a scheduler folder, or the file itself.
absl::StatusOr<nlohmann::json> ReadSchedulerConfig(
    const std::string& path_or_dir);

// Typed reads of a scheduler config with the class's defaults for absent
// keys; null (Python None) also means the default. A wrong type or value is
// recorded and the default returned, so a constructor reads every field and
// then checks status() once; the first error names the source, the key, the
// value and what was expected.
class ConfigReader {
 public:
  ConfigReader(const nlohmann::json& json, std::string source);

  double Number(const std::string& key, double default_value);
  int64_t Int(const std::string& key, int64_t default_value);
  bool Bool(const std::string& key, bool default_value);
  std::string String(const std::string& key, std::string default_value);
  // One of `allowed`.
  std::string Choice(const std::string& key, std::string default_value,
                     const std::vector<std::string>& allowed);
  std::optional<double> OptionalNumber(const std::string& key);
  std::optional<std::vector<double>> OptionalNumberList(const std::string& key);
  // Records an error unless the key is absent, null or equal to `supported`:
  // for options this implementation does not have.
  void RequireBool(const std::string& key, bool supported);

  // Records an error about `key` (for checks across fields).
  void Fail(const std::string& key, const std::string& problem);

  const std::string& source() const { return source_; }
  const absl::Status& status() const { return status_; }

 private:
  // nullptr when absent or null.
  const nlohmann::json* Find(const std::string& key) const;
  void WrongValue(const std::string& key, const nlohmann::json& value,
                  const std::string& expected);

  const nlohmann::json& json_;
  std::string source_;
  absl::Status status_;
};

}  // namespace ditserve::schedulers

#endif  // DITSERVE_CORE_SCHEDULERS_SCHEDULER_CONFIG_H_
