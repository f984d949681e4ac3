#include "server/credential_reloader.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "prometheus/metric_family.h"
#include "server/bearer_auth.h"
#include "server/metrics.h"

namespace ditserve::server {
namespace {

constexpr char kOldToken[] = "old-token-0123456789";
constexpr char kNewToken[] = "new-token-0123456789";

// As a Kubernetes secret update or `mv` does it: readers see the old file or
// the new one, never half of one.
void ReplaceFile(const std::string& path, const std::string& contents) {
  const std::string next = path + ".next";
  std::ofstream(next) << contents;
  ASSERT_EQ(std::rename(next.c_str(), path.c_str()), 0);
}

double Reloads(Metrics& metrics, const std::string& result) {
  for (const prometheus::MetricFamily& family : metrics.registry().Collect()) {
    if (family.name != kCredentialReloadsMetric) continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      bool matches = true;
      for (const prometheus::ClientMetric::Label& label : metric.label) {
        if (label.name == "credential") {
          matches = matches && label.value == kAuthTokensCredential;
        }
        if (label.name == "result") matches = matches && label.value == result;
      }
      if (matches) return metric.counter.value;
    }
  }
  return -1;
}

// Polls `done` for up to 10 s.
bool Eventually(const std::function<bool()>& done) {
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// A token file holding kOldToken, the BearerAuth read from it, and the
// metrics the reloader counts in.
class CredentialReloaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ReplaceFile(path_, kOldToken);
    absl::StatusOr<std::unique_ptr<BearerAuth>> auth =
        BearerAuth::FromTokenFile(path_, false);
    ASSERT_TRUE(auth.ok()) << auth.status();
    tokens_ = *std::move(auth);
  }

  bool Accepts(const char* token) const {
    return tokens_->Authenticate(absl::StrCat("Bearer ", token)).ok();
  }
  ReloadedCredential Tokens() {
    return {kAuthTokensCredential, [this] { return tokens_->Reload(); }};
  }

  void TearDown() override { std::remove(path_.c_str()); }

  // One file per test and process: ctest runs this binary's tests as
  // processes side by side, and one test's bad file failed the other's
  // reload when they shared a path.
  const std::string path_ = absl::StrCat(
      ::testing::TempDir(), "/reloaded-tokens-",
      ::testing::UnitTest::GetInstance()->current_test_info()->name(), "-",
      ::getpid());
  std::unique_ptr<BearerAuth> tokens_;
  Metrics metrics_{"flux-dev", 1, {"0.1.0", "1.13.1", "cpu", "float32"}};
};

TEST_F(CredentialReloaderTest, RotatedTokensServeAndABadFileKeepsTheCurrent) {
  const CredentialReloader reloader(
      {Tokens()}, absl::Milliseconds(20), [] { return false; }, &metrics_);
  EXPECT_EQ(Reloads(metrics_, "applied"), 0) << "an unchanged file is no news";
  ReplaceFile(path_, kNewToken);
  ASSERT_TRUE(Eventually([&] { return Accepts(kNewToken); }));
  EXPECT_FALSE(Accepts(kOldToken)) << "the old token is revoked";
  // Counted just after the swap, on the reloader's thread.
  ASSERT_TRUE(Eventually([&] { return Reloads(metrics_, "applied") == 1; }));

  ReplaceFile(path_, "# emptied by mistake\n");
  // Each re-read of a bad file counts, so an alert on the count fires for as
  // long as the file stays bad.
  ASSERT_TRUE(Eventually([&] { return Reloads(metrics_, "rejected") >= 2; }));
  EXPECT_TRUE(Accepts(kNewToken));
  EXPECT_EQ(Reloads(metrics_, "applied"), 1);
}

TEST_F(CredentialReloaderTest, ARequestReloadsAtOnce) {
  std::atomic<bool> requested = false;
  const CredentialReloader reloader(
      {Tokens()}, absl::Hours(1),
      [&requested] { return requested.exchange(false); }, &metrics_);
  ReplaceFile(path_, kNewToken);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(Accepts(kNewToken))
      << "not before the hour is up or a reload is asked for";
  requested = true;
  EXPECT_TRUE(Eventually([&] { return Accepts(kNewToken); }));
}

}  // namespace
}  // namespace ditserve::server
