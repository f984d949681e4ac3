// The shipped monitoring against a real group: a real Prometheus scrapes it
// and evaluates deploy/prometheus/ditserve-rules.yml; every query of every
// panel of deploy/grafana/ditserve.json (with its variables at "All" and at
// the values their own queries find) and every recording rule must return
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
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
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

// The dashboard's query variables (`$model`, `$instance`): each name with
// the metric and the label its label_values() query reads, and the value
// that stands for "All".
struct Variable {
  std::string name;
  std::string metric;
  std::string label;
  std::string all_value;
};

std::vector<Variable> QueryVariables(const nlohmann::json& dashboard) {
  std::vector<Variable> variables;
  for (const nlohmann::json& variable : dashboard.at("templating").at("list")) {
    if (variable.at("type") != "query") continue;
    const std::string name = variable.at("name").get<std::string>();
    // Grafana runs query.query; definition is what its editor shows.
    const std::string query =
        variable.at("query").at("query").get<std::string>();
    EXPECT_EQ(variable.at("definition").get<std::string>(), query) << name;
    EXPECT_TRUE(variable.value("multi", false)) << name;
    EXPECT_TRUE(variable.value("includeAll", false)) << name;
    std::vector<std::string> arguments = absl::StrSplit(
        absl::StripSuffix(absl::StripPrefix(query, "label_values("), ")"),
        ", ");
    EXPECT_EQ(arguments.size(), 2U) << query;
    if (arguments.size() != 2) continue;
    variables.push_back({name, arguments[0], arguments[1],
                         variable.value("allValue", std::string())});
  }
  return variables;
}

// `value` as a regular expression matching it alone, in a PromQL string, as
// Grafana formats a picked value of a multi-value variable: each special
// character escaped for the regular expression, and each backslash of that
// escaped again for the string.
std::string QuotedRegex(const std::string& value) {
  std::string quoted;
  for (const char c : value) {
    if (c == '\\') {
      quoted += "\\\\\\\\";
      continue;
    }
    if (absl::StrContains(".+*?()[]{}|^$", c)) quoted += "\\\\";
    quoted += c;
  }
  return quoted;
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

  const nlohmann::json dashboard = nlohmann::json::parse(
      std::ifstream(DITSERVE_SOURCE_DIR "/deploy/grafana/ditserve.json"));
  std::map<std::string, std::string> panel_queries;  // expression -> panel
  CollectPanelQueries(dashboard.at("panels"), panel_queries);
  ASSERT_FALSE(panel_queries.empty()) << "the dashboard has no queries";
  // Each query as Grafana sends it with every variable at "All" (its
  // allValue), at the value its own query finds (this group's model and its
  // host's scrape target), and at that value picked with another (Grafana's
  // "(a|b)"): each must select data.
  const std::vector<Variable> variables = QueryVariables(dashboard);
  ASSERT_EQ(variables.size(), 2U) << "the model and instance variables";
  std::vector<std::pair<std::string, std::string>> all;
  std::vector<std::pair<std::string, std::string>> found;
  std::vector<std::pair<std::string, std::string>> picked_with_another;
  for (const Variable& variable : variables) {
    absl::StatusOr<nlohmann::json> data = (*prometheus)->Query(variable.metric);
    ASSERT_TRUE(data.ok()) << data.status();
    ASSERT_FALSE((*data)["result"].empty()) << variable.metric;
    const nlohmann::json& labels = (*data)["result"][0]["metric"];
    ASSERT_TRUE(labels.contains(variable.label))
        << variable.metric << " has no label " << variable.label << ": "
        << labels.dump();
    ASSERT_FALSE(variable.all_value.empty()) << variable.name;
    const std::string reference = "$" + variable.name;
    const std::string value =
        QuotedRegex(labels[variable.label].get<std::string>());
    all.emplace_back(reference, variable.all_value);
    found.emplace_back(reference, value);
    picked_with_another.emplace_back(reference,
                                     "(" + value + "|no-such-value)");
  }
  std::map<std::string, std::string> pending;  // expression -> its source
  for (const auto& [expr, panel] : panel_queries) {
    const std::string every_value = absl::StrReplaceAll(expr, all);
    EXPECT_NE(every_value, expr) << panel << " follows no variable: " << expr;
    pending[every_value] = panel + " (every value)";
    pending[absl::StrReplaceAll(expr, found)] = panel + " (one value)";
    pending[absl::StrReplaceAll(expr, picked_with_another)] =
        panel + " (two values)";
  }
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
