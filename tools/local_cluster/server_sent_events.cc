#include "tools/local_cluster/server_sent_events.h"

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace ditserve::local_cluster {

std::vector<std::pair<std::string, nlohmann::json>> ParseServerSentEvents(
    const std::string& stream) {
  std::vector<std::pair<std::string, nlohmann::json>> events;
  for (absl::string_view block : absl::StrSplit(stream, "\n\n")) {
    if (block.empty() || block[0] == ':') continue;
    std::string type;
    nlohmann::json data;
    for (absl::string_view line : absl::StrSplit(block, '\n')) {
      if (absl::ConsumePrefix(&line, "event: ")) type = std::string(line);
      if (absl::ConsumePrefix(&line, "data: ")) {
        data = nlohmann::json::parse(line);
      }
    }
    events.emplace_back(type, data);
  }
  return events;
}

}  // namespace ditserve::local_cluster
