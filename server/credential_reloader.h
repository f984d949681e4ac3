#ifndef DITSERVE_SERVER_CREDENTIAL_RELOADER_H_
#define DITSERVE_SERVER_CREDENTIAL_RELOADER_H_

// Re-reads the credential files (--auth_token_file, the TLS files) every
// --credential_refresh_s, and at once on SIGHUP (`systemctl reload`), while
// the host serves, so that a leaked token is
// revoked, or a certificate renewed by cert-manager or a Kubernetes secret
// update serves, without a restart that would drop the queue. A file that
// fails the start-up checks is not taken: the current credentials keep
// serving, the host logs why, and ditserve_credential_reloads_total counts
// it as rejected.

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/base/steady_wait.h"
#include "server/metrics.h"

namespace ditserve::server {

struct ReloadedCredential {
  // A k*Credential name of metrics.h.
  std::string name;
  // Re-reads the files and takes them when they pass: true when they
  // changed, false when they are as before; an error leaves the current
  // credentials in place.
  std::function<absl::StatusOr<bool>()> reload;
};

class CredentialReloader {
 public:
  // Starts a thread that reloads each of `credentials` every `interval`,
  // and sooner when `requested` (polled a few times a second; it reads and
  // clears a flag a signal handler sets) returns true.
  CredentialReloader(std::vector<ReloadedCredential> credentials,
                     absl::Duration interval, std::function<bool()> requested,
                     Metrics* metrics);
  // Stops the thread; a reload in progress finishes first.
  ~CredentialReloader();
  CredentialReloader(const CredentialReloader&) = delete;
  CredentialReloader& operator=(const CredentialReloader&) = delete;

 private:
  void ReloadEach();

  const std::vector<ReloadedCredential> credentials_;
  const std::function<bool()> requested_;
  // The error each credential's last reload logged ("" when it passed), so
  // that a file that stays bad is logged once, not at every interval.
  std::vector<std::string> last_errors_;
  Metrics* const metrics_;
  base::SteadyNotification stop_;
  std::thread thread_;
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_CREDENTIAL_RELOADER_H_
