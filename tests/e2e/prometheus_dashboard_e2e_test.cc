// The shipped monitoring against a real group: a real Prometheus scrapes it
// and evaluates deploy/prometheus/ditserve-rules.yml; every query of every
// panel of deploy/grafana/ditserve.json and every recording rule must return
// a number through Prometheus's HTTP API, and every rule must evaluate
// without error. That every ditserve_* name they use is registered in
// server/metrics.h is checked without a group by tests/ops/
// check_metric_names.sh (ctest ops/metric_names).

#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/local_cluster/prometheus_server.h"
#include "tools/local_cluster/serving_cluster.h"
#include "tools/local_cluster/streamed_generation.h"

namespace ditserve::testing {
namespace {

using ::ditserve::local_cluster::PrometheusServer;
using ::ditserve::local_cluster::ServingCluster;
using ::ditserve::local_cluster::SmallRequest;
using ::ditserve::local_cluster::StreamedGeneration;
using ::ditserve::local_cluster::StreamGeneration;

// Scrapes and rule evaluations are every second; the rest is slack for two
// busy cores.
constexpr std::chrono::seconds kScrapeLimit{60};
constexpr std::chrono::seconds kDataLimit{90};
constexpr std::chrono::seconds kPollInterval{1};

// The expression of every target of every panel, with the panel's title;
// a collapsed row keeps its panels inside it.
void CollectPanelQueries(const nlohmann::json& panels,
                         std::map<std::string, std::string>& queries) {
  for (const nlohmann::json& panel : panels) {
    for (const nlohmann::json& target :
         panel.value("targets", nlohmann::json::array())) {
      queries[target.at("expr").get<std::string>()] =
          "panel \"" + panel.value("title", "") + "\"";
    }
    CollectPanelQueries(panel.value("panels", nlohmann::json::array()),
                        queries);
  }
}

// Whether an instant query's result has a sample that is a number: a
// quantile or ratio of rates that saw no increase is NaN, which a panel
// draws as nothing.
bool HasNumber(const nlohmann::json& data) {
  for (const nlohmann::json& series : data.at("result")) {
    if (std::isfinite(std::stod(series.at("value")[1].get<std::string>()))) {
      return true;
    }
  }
  return false;
}

// Polls until the first sample of `expr` is at least `at_least`, i.e.
// Prometheus has scraped the host that far.
bool WaitForSample(const PrometheusServer& prometheus, const std::string& expr,
                   double at_least) {
  const auto give_up = std::chrono::steady_clock::now() + kScrapeLimit;
  while (std::chrono::steady_clock::now() < give_up) {
    absl::StatusOr<nlohmann::json> data = prometheus.Query(expr);
    if (data.ok() && !(*data)["result"].empty() &&
        std::stod((*data)["result"][0]["value"][1].get<std::string>()) >=
            at_least) {
      return true;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  return false;
}

// One request that runs, streaming a preview, and one the host refuses (a
// width that is not a multiple of 16), so that the ok and the non-ok
// counters and the previews' delay all move.
void RunOkAndRefused(ServingCluster& cluster) {
  v1::GenerateRequest previewed = SmallRequest("a dashboard at dusk");
  previewed.set_partial_images(1);
  absl::StatusOr<StreamedGeneration> ok =
      StreamGeneration(cluster, previewed, 120);
  ASSERT_TRUE(ok.ok()) << ok.status();
  ASSERT_EQ(ok->partial_images.size(), 1U);
  v1::GenerateRequest refused = SmallRequest("refused");
  refused.set_width(50);
  EXPECT_EQ(cluster.Generate(refused, 30).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PrometheusDashboardE2eTest, EveryPanelQueryAndRuleReturnsData) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 2, .rank_flags = {"--dp_degree=2"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  absl::StatusOr<std::unique_ptr<PrometheusServer>> prometheus =
      PrometheusServer::Start(
          (*cluster)->metrics_port(),
          {DITSERVE_SOURCE_DIR "/deploy/prometheus/ditserve-rules.yml"});
  ASSERT_TRUE(prometheus.ok()) << prometheus.status();

  // rate() sees only increases between scraped samples. The host makes every
  // series at zero when it starts (server/metrics.cc), so one round of
  // requests after a first scrape is enough: the group's first error and
  // each rank's first stage times reach the panels and the error ratio.
  ASSERT_TRUE(WaitForSample(**prometheus, "ditserve_world_size", 2))
      << (*prometheus)->Output();
  ASSERT_NO_FATAL_FAILURE(RunOkAndRefused(**cluster));

  std::map<std::string, std::string> pending;  // expression -> its source
  const nlohmann::json dashboard = nlohmann::json::parse(
      std::ifstream(DITSERVE_SOURCE_DIR "/deploy/grafana/ditserve.json"));
  CollectPanelQueries(dashboard.at("panels"), pending);
  ASSERT_FALSE(pending.empty()) << "the dashboard has no queries";
  absl::StatusOr<nlohmann::json> rules = (*prometheus)->Rules();
  ASSERT_TRUE(rules.ok()) << rules.status();
  int alerts = 0;
  for (const nlohmann::json& group : (*rules)["groups"]) {
    for (const nlohmann::json& rule : group["rules"]) {
      if (rule["type"] == "recording") {
        pending[rule["name"].get<std::string>()] = "recording rule";
      } else {
        ++alerts;
      }
    }
  }
  // A rule_files entry is a glob: one that matches nothing loads no rules
  // and no error.
  ASSERT_GT(alerts, 0) << rules->dump();

  std::map<std::string, std::string> last_answer;
  const auto give_up = std::chrono::steady_clock::now() + kDataLimit;
  while (!pending.empty() && std::chrono::steady_clock::now() < give_up) {
    for (auto it = pending.begin(); it != pending.end();) {
      absl::StatusOr<nlohmann::json> data = (*prometheus)->Query(it->first);
      if (data.ok() && HasNumber(*data)) {
        it = pending.erase(it);
        continue;
      }
      last_answer[it->first] =
          data.ok() ? data->dump() : std::string(data.status().message());
      ++it;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  for (const auto& [expr, source] : pending) {
    ADD_FAILURE() << source << " `" << expr << "` returned no number in "
                  << kDataLimit.count() << " s; last answer "
                  << last_answer[expr];
  }

  // By now each group has been evaluated many times (every second since
  // Prometheus was ready). An alert's expression may rightly select nothing,
  // so for alerts this is the check: it evaluates.
  rules = (*prometheus)->Rules();
  ASSERT_TRUE(rules.ok()) << rules.status();
  for (const nlohmann::json& group : (*rules)["groups"]) {
    for (const nlohmann::json& rule : group["rules"]) {
      EXPECT_EQ(rule["health"].get<std::string>(), "ok")
          << rule["name"] << ": " << rule.value("lastError", "");
    }
  }
}

}  // namespace
}  // namespace ditserve::testing
