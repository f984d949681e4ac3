#ifndef DITSERVE_TOOLS_LOCAL_CLUSTER_TEST_CERTIFICATES_H_
#define DITSERVE_TOOLS_LOCAL_CLUSTER_TEST_CERTIFICATES_H_

#include <string>

#include "absl/status/statusor.h"

namespace ditserve::local_cluster {

// A CA, a server certificate for 127.0.0.1 / localhost and a client
// certificate signed by it, made by openssl (P-256 keys: quick to make).
struct TestCertificates {
  std::string dir;
  std::string ca() const { return dir + "/ca.pem"; }
  std::string server_cert() const { return dir + "/server.pem"; }
  std::string server_key() const { return dir + "/server.key"; }
  std::string client_cert() const { return dir + "/client.pem"; }
  std::string client_key() const { return dir + "/client.key"; }
};

// Writes them into `dir` (created); INTERNAL with openssl's output when it
// fails.
absl::StatusOr<TestCertificates> MakeTestCertificates(const std::string& dir);

}  // namespace ditserve::local_cluster

#endif  // DITSERVE_TOOLS_LOCAL_CLUSTER_TEST_CERTIFICATES_H_
