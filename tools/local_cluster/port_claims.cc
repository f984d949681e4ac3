#include "tools/local_cluster/port_claims.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ditserve::local_cluster {

std::string PortClaims::DefaultPath() {
  return (std::filesystem::temp_directory_path() / "ditserve-port-claims")
      .string();
}

absl::StatusOr<std::unique_ptr<PortClaims>> PortClaims::Open(
    const std::string& path) {
  // An existing file is opened without O_CREAT: with fs.protected_regular,
  // Debian's default, O_CREAT on another user's file in /tmp fails even for
  // root.
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      // The umask would keep other users out.
      fchmod(fd, 0666);
    } else if (errno == EEXIST) {
      fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    }
  }
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("open ", path, ": ", std::strerror(errno)));
  }
  return std::unique_ptr<PortClaims>(new PortClaims(fd));
}

PortClaims::~PortClaims() { close(fd_); }

absl::StatusOr<bool> PortClaims::Claim(int port) {
  struct flock claim {};
  claim.l_type = F_WRLCK;
  claim.l_whence = SEEK_SET;
  claim.l_start = port;
  claim.l_len = 1;
  // An open file description lock, unlike a POSIX record lock, is not dropped
  // when any other descriptor of the file in this process is closed, and two
  // PortClaims in one process exclude each other.
  if (fcntl(fd_, F_OFD_SETLK, &claim) == 0) return true;
  if (errno == EAGAIN || errno == EACCES) return false;
  return absl::InternalError(
      absl::StrCat("claim port ", port, ": ", std::strerror(errno)));
}

}  // namespace ditserve::local_cluster
