#ifndef DITSERVE_TOOLS_LOCAL_CLUSTER_PORT_CLAIMS_H_
#define DITSERVE_TOOLS_LOCAL_CLUSTER_PORT_CLAIMS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace ditserve::local_cluster {

// Claims on TCP ports, shared by every process on the machine that opens the
// same file: a claim is a lock on byte `port` of it. ctest runs tests side by
// side, and a port found free by one test could be found free by another
// before either server bound it; a claim closes that window. The locks belong
// to this object's open file description, so they end when it is destroyed
// or its process exits, and a crashed test leaves nothing to clean up.
class PortClaims {
 public:
  // The file PickFreePort claims its ports in.
  static std::string DefaultPath();

  // Opens (creating) `path`, readable and writable by every user, so that
  // claims of processes run as different users still see each other.
  static absl::StatusOr<std::unique_ptr<PortClaims>> Open(
      const std::string& path);

  PortClaims(const PortClaims&) = delete;
  PortClaims& operator=(const PortClaims&) = delete;
  ~PortClaims();

  // True when `port` is now claimed by this object (also when it was
  // already); false when another PortClaims holds it.
  absl::StatusOr<bool> Claim(int port);

 private:
  explicit PortClaims(int fd) : fd_(fd) {}

  int fd_;
};

}  // namespace ditserve::local_cluster

#endif  // DITSERVE_TOOLS_LOCAL_CLUSTER_PORT_CLAIMS_H_
