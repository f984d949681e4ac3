#include "core/engine/rank_report.h"

#include <algorithm>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/json.h"
#include "core/dist/collective.h"
#include "core/dist/collective_failure.h"
#include "nlohmann/json.hpp"

namespace ditserve::engine {

std::string SerializeRankReport(const RankReport& report) {
  nlohmann::json json;
  json["code"] = static_cast<int>(report.status.code());
  json["message"] = std::string(report.status.message());
  json["collective_failure"] = dist::IsCollectiveFailure(report.status);
  nlohmann::json seconds = nlohmann::json::object();
  for (Stage stage : kAllStages) {
    seconds[std::string(StageName(stage))] = report.timings.seconds(stage);
  }
  json["seconds"] = std::move(seconds);
  json["resident_bytes"] = report.memory.resident_bytes;
  json["peak_resident_bytes"] = report.memory.peak_resident_bytes;
  json["device_allocated_bytes"] = report.memory.device_allocated_bytes;
  json["device_peak_allocated_bytes"] =
      report.memory.device_peak_allocated_bytes;
  json["device_reserved_bytes"] = report.memory.device_reserved_bytes;
  return json.dump();
}

absl::StatusOr<RankReport> ParseRankReport(absl::string_view text) {
  const auto malformed = [&](absl::string_view why) {
    return absl::InternalError(absl::StrCat("malformed rank report \"",
                                            text.substr(0, 200), "\": ", why));
  };
  absl::StatusOr<nlohmann::json> parsed =
      base::ParsePythonJson(text, "rank report");
  if (!parsed.ok()) return malformed(parsed.status().message());
  try {
    const nlohmann::json& json = *parsed;
    RankReport report;
    report.status =
        absl::Status(static_cast<absl::StatusCode>(json.at("code").get<int>()),
                     json.at("message").get<std::string>());
    if (json.at("collective_failure").get<bool>()) {
      report.status = dist::MarkCollectiveFailure(std::move(report.status));
    }
    const nlohmann::json& seconds = json.at("seconds");
    for (Stage stage : kAllStages) {
      report.timings.Add(
          stage, seconds.at(std::string(StageName(stage))).get<double>());
    }
    report.memory.resident_bytes = json.at("resident_bytes").get<int64_t>();
    report.memory.peak_resident_bytes =
        json.at("peak_resident_bytes").get<int64_t>();
    // Optional: a rank of an older build, which the start-up agreement's
    // version does not tell apart, reports none.
    report.memory.device_allocated_bytes =
        json.value("device_allocated_bytes", int64_t{0});
    report.memory.device_peak_allocated_bytes =
        json.value("device_peak_allocated_bytes", int64_t{0});
    report.memory.device_reserved_bytes =
        json.value("device_reserved_bytes", int64_t{0});
    return report;
  } catch (const nlohmann::json::exception& error) {
    return malformed(error.what());
  }
}

absl::Status CombineRankStatuses(const std::vector<RankReport>& reports) {
  absl::StatusCode code = absl::StatusCode::kOk;
  // Failing ranks per distinct error, in order of the lowest rank.
  std::vector<std::pair<std::string, std::vector<int>>> errors;
  for (int rank = 0; rank < static_cast<int>(reports.size()); ++rank) {
    const absl::Status& status = reports[rank].status;
    if (status.ok()) continue;
    // A rank stopped because another failed says nothing of the cause.
    if (code == absl::StatusCode::kOk || code == absl::StatusCode::kAborted) {
      code = status.code();
    }
    const std::string error = status.ToString();
    auto same =
        std::find_if(errors.begin(), errors.end(),
                     [&](const auto& entry) { return entry.first == error; });
    if (same == errors.end()) {
      errors.push_back({error, {rank}});
    } else {
      same->second.push_back(rank);
    }
  }
  if (code == absl::StatusCode::kOk) return absl::OkStatus();
  std::vector<std::string> parts;
  for (const auto& [error, ranks] : errors) {
    parts.push_back(absl::StrCat(dist::RankList(ranks), ": ", error));
  }
  return absl::Status(code, absl::StrJoin(parts, "; "));
}

}  // namespace ditserve::engine
