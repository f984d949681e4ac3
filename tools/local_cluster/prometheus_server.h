#ifndef DITSERVE_TOOLS_LOCAL_CLUSTER_PROMETHEUS_SERVER_H_
#define DITSERVE_TOOLS_LOCAL_CLUSTER_PROMETHEUS_SERVER_H_

// Debian's Prometheus server (/usr/bin/prometheus) as a real process on
// loopback for tests: it scrapes one ditserve host, evaluates rule files and
// answers PromQL through its HTTP API.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tools/local_cluster/rank_launcher.h"

namespace ditserve::local_cluster {

class PrometheusServer {
 public:
  // Starts Prometheus scraping 127.0.0.1:`metrics_port` as job "ditserve"
  // and evaluating `rule_files`, both every second (a test cannot wait for
  // the usual 15 s), and waits until it reports ready.
  static absl::StatusOr<std::unique_ptr<PrometheusServer>> Start(
      int metrics_port, const std::vector<std::string>& rule_files = {});
  ~PrometheusServer();
  PrometheusServer(const PrometheusServer&) = delete;
  PrometheusServer& operator=(const PrometheusServer&) = delete;

  // The `data` of an instant query of `expr` now ({"resultType", "result"});
  // an error with Prometheus's answer when it refuses the expression.
  absl::StatusOr<nlohmann::json> Query(const std::string& expr) const;
  // The `data` of GET /api/v1/rules ({"groups": [...]}), every loaded rule
  // with its health and last error.
  absl::StatusOr<nlohmann::json> Rules() const;
  // Prometheus's log so far.
  std::string Output() const;

 private:
  PrometheusServer() = default;
  absl::StatusOr<nlohmann::json> GetData(const std::string& path) const;

  int port_ = 0;
  std::string directory_;
  std::unique_ptr<RankLauncher> process_;
};

}  // namespace ditserve::local_cluster

#endif  // DITSERVE_TOOLS_LOCAL_CLUSTER_PROMETHEUS_SERVER_H_
