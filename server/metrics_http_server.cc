#include "server/metrics_http_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "prometheus/text_serializer.h"

namespace ditserve::server {
namespace {

// A scrape request is a few hundred bytes; anything longer is not one.
constexpr size_t kMaxRequestBytes = 8192;
// A client that stalls longer than this loses its connection, so one slow
// peer cannot hold the endpoint.
constexpr int kIoTimeoutSeconds = 5;
// How often the accept loop checks whether it should stop.
constexpr int kPollMilliseconds = 200;

void SetIoTimeouts(int fd) {
  timeval timeout{};
  timeout.tv_sec = kIoTimeoutSeconds;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
}

void SendAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    const ssize_t sent = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return;
    data.remove_prefix(static_cast<size_t>(sent));
  }
}

// The request head (up to the blank line), or what arrived before the peer
// stopped, timed out or exceeded kMaxRequestBytes.
std::string ReadRequestHead(int fd) {
  std::string head;
  char buffer[1024];
  while (head.size() < kMaxRequestBytes &&
         head.find("\r\n\r\n") == std::string::npos) {
    const ssize_t got = recv(fd, buffer, sizeof(buffer), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    head.append(buffer, static_cast<size_t>(got));
  }
  return head;
}

std::string Response(absl::string_view status, absl::string_view content_type,
                     absl::string_view body, bool include_body) {
  return absl::StrCat("HTTP/1.1 ", status, "\r\nContent-Type: ", content_type,
                      "\r\nContent-Length: ", body.size(),
                      "\r\nConnection: close\r\n\r\n",
                      include_body ? body : "");
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    const std::string& host, int port,
    std::shared_ptr<prometheus::Registry> registry) {
  const std::string address = absl::StrCat(host, ":", port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* resolved = nullptr;
  const std::string service = absl::StrCat(port);
  if (const int error = getaddrinfo(host.empty() ? nullptr : host.c_str(),
                                    service.c_str(), &hints, &resolved);
      error != 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot resolve metrics address ", address, ": ", gai_strerror(error)));
  }
  std::string last_error = "no address";
  int fd = -1;
  for (addrinfo* candidate = resolved; candidate != nullptr;
       candidate = candidate->ai_next) {
    fd = socket(candidate->ai_family, candidate->ai_socktype | SOCK_CLOEXEC,
                candidate->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    const int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (bind(fd, candidate->ai_addr, candidate->ai_addrlen) == 0 &&
        listen(fd, SOMAXCONN) == 0) {
      break;
    }
    last_error = std::strerror(errno);
    close(fd);
    fd = -1;
  }
  freeaddrinfo(resolved);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", address, ": ", last_error));
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
  const int bound_port =
      bound.ss_family == AF_INET6
          ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
          : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return std::unique_ptr<MetricsHttpServer>(
      new MetricsHttpServer(fd, bound_port, std::move(registry)));
}

MetricsHttpServer::MetricsHttpServer(
    int listen_fd, int port, std::shared_ptr<prometheus::Registry> registry)
    : listen_fd_(listen_fd), port_(port), registry_(std::move(registry)) {
  thread_ = std::thread([this] { AcceptLoop(); });
}

MetricsHttpServer::~MetricsHttpServer() {
  stopping_ = true;
  thread_.join();
  close(listen_fd_);
}

void MetricsHttpServer::AcceptLoop() {
  while (!stopping_) {
    pollfd waiting{listen_fd_, POLLIN, 0};
    if (poll(&waiting, 1, kPollMilliseconds) <= 0) continue;
    const int connection = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) continue;
    SetIoTimeouts(connection);
    Answer(connection);
    close(connection);
  }
}

void MetricsHttpServer::Answer(int connection) const {
  const std::string head = ReadRequestHead(connection);
  const std::vector<absl::string_view> request_line =
      absl::StrSplit(absl::string_view(head).substr(0, head.find("\r\n")), ' ');
  if (request_line.size() != 3 ||
      !absl::StartsWith(request_line[2], "HTTP/1.")) {
    SendAll(connection, Response("400 Bad Request", "text/plain",
                                 "not an HTTP/1.x request\n", true));
    return;
  }
  const absl::string_view method = request_line[0];
  const bool head_only = method == "HEAD";
  if (method != "GET" && !head_only) {
    SendAll(connection, Response("405 Method Not Allowed", "text/plain",
                                 "only GET and HEAD are served\n", true));
    return;
  }
  const absl::string_view path =
      request_line[1].substr(0, request_line[1].find('?'));
  if (path != "/metrics") {
    SendAll(connection, Response("404 Not Found", "text/plain",
                                 "metrics are at /metrics\n", !head_only));
    return;
  }
  const std::string body =
      prometheus::TextSerializer().Serialize(registry_->Collect());
  SendAll(connection,
          Response("200 OK", "text/plain; version=0.0.4", body, !head_only));
}

}  // namespace ditserve::server
