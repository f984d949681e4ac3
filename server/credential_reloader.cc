#include "server/credential_reloader.h"

#include <utility>

#include "server/log_text.h"
#include "spdlog/spdlog.h"

namespace ditserve::server {

CredentialReloader::CredentialReloader(
    std::vector<ReloadedCredential> credentials, absl::Duration interval,
    Metrics* metrics)
    : credentials_(std::move(credentials)),
      last_errors_(credentials_.size()),
      metrics_(metrics) {
  thread_ = std::thread([this, interval] {
    while (!stop_.WaitForNotificationWithTimeout(interval)) ReloadEach();
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
