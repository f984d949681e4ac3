#include "server/http_server.h"

#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/tls_identity.h"

namespace ditserve::server {
namespace {

// Names the method a request was routed as another under; a client's own
// header of that name is dropped first.
constexpr char kRoutedFromHeader[] = "Ditserve-Routed-From";

// The methods whose body cpp-httplib reads, a DELETE's only when it has a
// Content-Length; it reads a PRI's whole into memory.
bool BodyIsReadFor(const std::string& method) {
  return method == "POST" || method == "PUT" || method == "PATCH" ||
         method == "DELETE";
}

// Any Transfer-Encoding frames a body (RFC 9112 6.1), and so does a
// Content-Length other than 0, even one that cannot be read.
bool CarriesABody(const httplib::Request& request) {
  return request.has_header("Transfer-Encoding") ||
         (request.has_header("Content-Length") &&
          request.get_header_value("Content-Length") != "0");
}

void DrainAndRefuse(const httplib::Request& request,
                    httplib::Response& response,
                    const httplib::ContentReader& read_body) {
  read_body([](const char*, size_t) { return true; });
  response.status = 404;
  if (request.has_header(kRoutedFromHeader)) {
    // cpp-httplib hands a const view of the Request it owns, a local of its
    // own that is not const; the error handler explains the refusal by it.
    auto& routed = const_cast<httplib::Request&>(request);
    routed.method = routed.get_header_value(kRoutedFromHeader);
    routed.headers.erase(kRoutedFromHeader);
    if (CarriesABodyOfAMethodThatTakesNone(routed)) response.status = 400;
  }
}

// Linux's largest TCP_KEEPIDLE and TCP_KEEPINTVL (MAX_TCP_KEEPIDLE).
constexpr int64_t kLongestKeepaliveSeconds = 32767;
// Unanswered probes before the connection fails; TcpKeepalive::timeout is
// spread over them.
constexpr int kKeepaliveProbes = 3;

int KeepaliveSeconds(absl::Duration duration) {
  return static_cast<int>(std::clamp<int64_t>(
      absl::ToInt64Seconds(absl::Ceil(duration, absl::Seconds(1))), 1,
      kLongestKeepaliveSeconds));
}

// On the listening socket: Linux gives each accepted connection the
// listener's keepalive settings, and cpp-httplib sets none on those.
void SetTcpKeepalive(socket_t socket, const TcpKeepalive& keepalive) {
  const int on = 1;
  const int idle = KeepaliveSeconds(keepalive.idle);
  const int interval = KeepaliveSeconds(keepalive.timeout / kKeepaliveProbes);
  setsockopt(socket, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  setsockopt(socket, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  setsockopt(socket, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  setsockopt(socket, IPPROTO_TCP, TCP_KEEPCNT, &kKeepaliveProbes,
             sizeof(kKeepaliveProbes));
}

}  // namespace

bool CarriesABodyOfAMethodThatTakesNone(const httplib::Request& request) {
  return !BodyIsReadFor(request.method) && request.method != "PRI" &&
         CarriesABody(request);
}

void RouteUnreadBodiesToTheDrain(httplib::Request& request) {
  request.headers.erase(kRoutedFromHeader);
  const bool unread =
      request.method == "PRI" ||
      (request.method == "DELETE" && !request.has_header("Content-Length") &&
       request.has_header("Transfer-Encoding")) ||
      CarriesABodyOfAMethodThatTakesNone(request);
  if (!unread) return;
  request.set_header(kRoutedFromHeader, request.method);
  request.method = "PATCH";
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& host, int port, int threads, const AddRoutes& add_routes,
    const TlsIdentity* tls, std::optional<TcpKeepalive> keepalive) {
  std::unique_ptr<httplib::Server> server;
  if (tls != nullptr) {
    auto tls_server = std::make_unique<httplib::SSLServer>(
        [tls](SSL_CTX& context) { return tls->SetUpHttps(context); });
    if (!tls_server->is_valid()) {
      return absl::InternalError(absl::StrCat("HTTPS on ", host, ":", port,
                                              ": OpenSSL could not be set up"));
    }
    server = std::move(tls_server);
  } else {
    server = std::make_unique<httplib::Server>();
  }
  server->new_task_queue = [threads] {
    return new httplib::ThreadPool(static_cast<size_t>(threads));
  };
  // cpp-httplib's default also sets SO_REUSEPORT, which lets a second
  // server bind the same port and take a share of its connections.
  server->set_socket_options([keepalive](socket_t socket) {
    const int yes = 1;
    setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (keepalive.has_value()) SetTcpKeepalive(socket, *keepalive);
  });
  server->set_read_timeout(kHttpIoTimeoutSeconds, 0);
  server->set_write_timeout(kHttpIoTimeoutSeconds, 0);
  server->set_keep_alive_timeout(kHttpIoTimeoutSeconds);
  server->set_payload_max_length(kMaxBodyBytes);
  server->set_pre_routing_handler(
      [](const httplib::Request& request, httplib::Response&) {
        RouteUnreadBodiesToTheDrain(const_cast<httplib::Request&>(request));
        return httplib::Server::HandlerResponse::Unhandled;
      });
  add_routes(*server);
  // After the routes, which cpp-httplib tries in the order they were added.
  server->Post(".*", DrainAndRefuse);
  server->Put(".*", DrainAndRefuse);
  server->Patch(".*", DrainAndRefuse);
  server->Delete(".*", DrainAndRefuse);
  const int bound = port == 0 ? server->bind_to_any_port(host)
                              : (server->bind_to_port(host, port) ? port : -1);
  if (bound <= 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen for HTTP on ", host, ":", port));
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(server), bound));
}

HttpServer::HttpServer(std::unique_ptr<httplib::Server> server, int port)
    : server_(std::move(server)), port_(port) {
  thread_ = std::thread([this] {
    server_->listen_after_bind();
    listen_returned_.store(true);
  });
  // stop() does nothing until the loop runs, so the destructor could not
  // end a loop that starts after it.
  while (!server_->is_running() && !listen_returned_.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

HttpServer::~HttpServer() {
  server_->stop();
  thread_.join();
}

}  // namespace ditserve::server
