#include "server/peer_socket.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace ditserve::server {
namespace {

struct Endpoint {
  std::string address;
  int port = -1;
};

// As cpp-httplib formats Request::remote_addr: numeric host, no scope.
std::optional<Endpoint> Describe(const sockaddr_storage& address,
                                 socklen_t length) {
  std::array<char, NI_MAXHOST> host{};
  std::array<char, NI_MAXSERV> service{};
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&address), length,
                  host.data(), host.size(), service.data(), service.size(),
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return std::nullopt;
  }
  return Endpoint{host.data(), std::atoi(service.data())};
}

}  // namespace

std::optional<int> FindPeerSocket(const std::string& peer_address,
                                  int peer_port, int local_port) {
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/self/fd", error)) {
    int fd = -1;
    try {
      fd = std::stoi(entry.path().filename().string());
    } catch (const std::exception&) {
      continue;
    }
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      continue;
    }
    const std::optional<Endpoint> peer = Describe(address, length);
    if (!peer || peer->port != peer_port || peer->address != peer_address) {
      continue;
    }
    length = sizeof(address);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      continue;
    }
    const std::optional<Endpoint> local = Describe(address, length);
    if (local && local->port == local_port) return fd;
  }
  return std::nullopt;
}

bool PeerHasClosed(int socket) {
  pollfd watched{.fd = socket, .events = POLLRDHUP, .revents = 0};
  if (poll(&watched, 1, 0) < 0) return false;
  return (watched.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

}  // namespace ditserve::server
