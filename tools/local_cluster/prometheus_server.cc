#include "tools/local_cluster/prometheus_server.h"

#include <stdlib.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/base/status_macros.h"
#include "tools/local_cluster/http_get.h"

namespace ditserve::local_cluster {
namespace {

// Prometheus opens its storage and loads the rules first; on two busy cores
// that is a few seconds.
constexpr std::chrono::seconds kReadyLimit{60};
constexpr std::chrono::milliseconds kPollInterval{100};

// `text` as one URL query value: everything but RFC 3986's unreserved
// characters is %-escaped (PromQL has spaces, braces, quotes and `+`).
std::string EncodeQueryValue(const std::string& text) {
  std::string encoded;
  for (const unsigned char c : text) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' ||
        c == '~') {
      encoded.push_back(static_cast<char>(c));
    } else {
      absl::StrAppendFormat(&encoded, "%%%02X", c);
    }
  }
  return encoded;
}

std::string Config(int metrics_port, const std::vector<std::string>& rules) {
  std::string config = absl::StrCat(
      "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n",
      "scrape_configs:\n  - job_name: ditserve\n    static_configs:\n",
      "      - targets: [\"127.0.0.1:", metrics_port, "\"]\n");
  if (!rules.empty()) absl::StrAppend(&config, "rule_files:\n");
  // A JSON string is a YAML double-quoted scalar: any path stays one value.
  for (const std::string& path : rules) {
    absl::StrAppend(&config, "  - ", nlohmann::json(path).dump(), "\n");
  }
  return config;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PrometheusServer>> PrometheusServer::Start(
    int metrics_port, const std::vector<std::string>& rule_files) {
  std::unique_ptr<PrometheusServer> server(new PrometheusServer());
  ASSIGN_OR_RETURN(server->port_, PickFreePort());
  std::string pattern =
      (std::filesystem::temp_directory_path() / "ditserve-prometheus-XXXXXX")
          .string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp: ", strerror(errno)));
  }
  server->directory_ = pattern;
  const std::string config_path = server->directory_ + "/prometheus.yml";
  std::ofstream(config_path) << Config(metrics_port, rule_files);
  ASSIGN_OR_RETURN(
      server->process_,
      RankLauncher::Start(
          "/usr/bin/prometheus",
          {"--config.file=" + config_path,
           "--storage.tsdb.path=" + server->directory_ + "/data",
           absl::StrCat("--web.listen-address=127.0.0.1:", server->port_)},
          /*world_size=*/1));

  const auto give_up = std::chrono::steady_clock::now() + kReadyLimit;
  // A config or rule file Prometheus cannot load makes it exit at once.
  while (std::chrono::steady_clock::now() < give_up &&
         server->process_->Exited().empty()) {
    if (HttpGet(server->port_, "/-/ready").ok()) return server;
    std::this_thread::sleep_for(kPollInterval);
  }
  return absl::UnavailableError(
      absl::StrCat("Prometheus did not become ready:\n", server->Output()));
}

PrometheusServer::~PrometheusServer() {
  // Stops the process before its storage goes.
  process_.reset();
  if (directory_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
}

absl::StatusOr<nlohmann::json> PrometheusServer::Query(
    const std::string& expr) const {
  return GetData("/api/v1/query?query=" + EncodeQueryValue(expr));
}

absl::StatusOr<nlohmann::json> PrometheusServer::Rules() const {
  return GetData("/api/v1/rules");
}

std::string PrometheusServer::Output() const { return process_->Output(0); }

absl::StatusOr<nlohmann::json> PrometheusServer::GetData(
    const std::string& path) const {
  ASSIGN_OR_RETURN(const std::string body, HttpGet(port_, path));
  const nlohmann::json answer = nlohmann::json::parse(body, nullptr, false);
  if (answer.is_discarded() || answer.value("status", "") != "success") {
    return absl::InternalError(
        absl::StrCat("GET ", path, " answered ", body.substr(0, 500)));
  }
  return answer["data"];
}

}  // namespace ditserve::local_cluster
