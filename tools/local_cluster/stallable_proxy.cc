#include "tools/local_cluster/stallable_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tools/local_cluster/rank_launcher.h"

namespace ditserve::local_cluster {
namespace {

// How often a waiting thread checks whether to stall or stop.
constexpr int kPollMilliseconds = 50;

// Whether `fd` has something to read (or was closed) within one poll.
bool Readable(int fd) {
  pollfd waiting{.fd = fd, .events = POLLIN, .revents = 0};
  return poll(&waiting, 1, kPollMilliseconds) > 0;
}

// Whether all `size` bytes went to `fd`; false once its peer has gone.
bool SendAll(int fd, const char* data, ssize_t size) {
  for (ssize_t sent = 0; sent < size;) {
    // MSG_NOSIGNAL: a peer that closed is an end, not a SIGPIPE.
    const ssize_t wrote = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return false;
    sent += wrote;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<StallableProxy>> StallableProxy::Start(
    int server_port) {
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) {
    return absl::UnavailableError(
        absl::StrCat("proxy socket: ", std::strerror(errno)));
  }
  // Port 0, kept bound: the kernel's pick cannot be taken meanwhile.
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (bind(listener, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      listen(listener, 16) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) !=
          0) {
    const int error = errno;
    close(listener);
    return absl::UnavailableError(
        absl::StrCat("proxy cannot listen: ", std::strerror(error)));
  }
  return std::unique_ptr<StallableProxy>(
      new StallableProxy(listener, ntohs(address.sin_port), server_port));
}

StallableProxy::StallableProxy(int listener, int port, int server_port)
    : listener_(listener),
      port_(port),
      server_port_(server_port),
      acceptor_([this] { Accept(); }) {}

StallableProxy::~StallableProxy() {
  stop_ = true;
  acceptor_.join();
  std::vector<std::thread> copiers;
  {
    absl::MutexLock lock(&mu_);
    // Wakes a copier blocked in a write to a peer that reads nothing.
    for (const int fd : sockets_) shutdown(fd, SHUT_RDWR);
    copiers = std::move(copiers_);
  }
  for (std::thread& copier : copiers) copier.join();
  absl::MutexLock lock(&mu_);
  for (const int fd : sockets_) close(fd);
  close(listener_);
}

void StallableProxy::Accept() {
  while (!stop_) {
    if (stalled_ || !Readable(listener_)) {
      if (stalled_) usleep(kPollMilliseconds * 1000);
      continue;
    }
    const int client = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    const int server = ConnectToLoopback(server_port_);
    if (server < 0) {
      close(client);
      continue;
    }
    absl::MutexLock lock(&mu_);
    sockets_.push_back(client);
    sockets_.push_back(server);
    copiers_.emplace_back([this, client, server] { Copy(client, server); });
    copiers_.emplace_back([this, client, server] { Copy(server, client); });
  }
}

void StallableProxy::Copy(int from, int to) {
  char buffer[16384];
  while (!stop_) {
    // Checked after the wait too: a byte that arrives once stalled stays in
    // the kernel's buffer, unread, as on a dead peer.
    if (!Readable(from) || stalled_) {
      if (stalled_) usleep(kPollMilliseconds * 1000);
      continue;
    }
    const ssize_t got = read(from, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (!SendAll(to, buffer, got)) break;
  }
  // The other direction sees the end too, as it would across one socket.
  shutdown(to, SHUT_WR);
}

}  // namespace ditserve::local_cluster
