#include "server/credential_reloader.h"

#include <algorithm>
#include <utility>

#include "core/base/monotonic_clock.h"
#include "server/log_text.h"
#include "spdlog/spdlog.h"

namespace ditserve::server {

namespace {

// How often the thread asks whether a reload was requested.
constexpr absl::Duration kRequestPoll = absl::Milliseconds(200);

}  // namespace

CredentialReloader::CredentialReloader(
    std::vector<ReloadedCredential> credentials, absl::Duration interval,
    std::function<bool()> requested, Metrics* metrics)
    : credentials_(std::move(credentials)),
      requested_(std::move(requested)),
      last_errors_(credentials_.size()),
      metrics_(metrics) {
  thread_ = std::thread([this, interval] {
    absl::Time next = base::MonotonicNow() + interval;
    while (!stop_.WaitForNotificationWithTimeout(
        std::min(kRequestPoll, interval))) {
      const bool asked = requested_();
      if (!asked && base::MonotonicNow() < next) continue;
      if (asked) {
        spdlog::info(credentials_.empty()
                         ? "asked to re-read the credential files, but none "
                           "is set (--auth_token_file, --tls_cert)"
                         : "re-reading the credential files on request");
      }
      ReloadEach();
      next = base::MonotonicNow() + interval;
    }
  });
}

CredentialReloader::~CredentialReloader() {
  stop_.Notify();
  thread_.join();
}

void CredentialReloader::ReloadEach() {
  for (size_t i = 0; i < credentials_.size(); ++i) {
    const std::string& name = credentials_[i].name;
    absl::StatusOr<bool> changed = credentials_[i].reload();
    if (!changed.ok()) {
      const std::string error(changed.status().message());
      // Counted each time, logged once while the same error lasts.
      metrics_->CountCredentialReload(name, /*applied=*/false);
      if (error != last_errors_[i]) {
        spdlog::error("{} not reloaded, the current ones keep serving: {}",
                      name, LogText(error));
      }
      last_errors_[i] = error;
      continue;
    }
    if (*changed) {
      metrics_->CountCredentialReload(name, /*applied=*/true);
      spdlog::info("{} reloaded: new handshakes and calls use them", name);
    } else if (!last_errors_[i].empty()) {
      spdlog::info("{} files pass the checks again, unchanged", name);
    }
    last_errors_[i].clear();
  }
}

}  // namespace ditserve::server
