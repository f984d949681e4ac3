#ifndef DITSERVE_SERVER_HTTP_SERVER_H_
#define DITSERVE_SERVER_HTTP_SERVER_H_

// One cpp-httplib server on its own listening thread: the metrics endpoint
// and the OpenAI-compatible API each run one.
//
// cpp-httplib runs handlers on plain std::threads, whose default stack holds
// the static TLS of LibTorch, OpenBLAS and glog; prometheus-cpp's civetweb
// exposer started its threads with a small fixed stack and failed there.

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace ditserve::server {

class TlsIdentity;

// A client that stalls longer than this mid-request or mid-response loses
// its connection, and an idle keep-alive connection is closed after it, so
// silent peers give their handler thread back.
inline constexpr int kHttpIoTimeoutSeconds = 5;

// The longest body a route keeps: a generation's JSON is far smaller (a
// prompt is at most ServerOptions::max_prompt_bytes) and /metrics takes none.
// cpp-httplib refuses a longer one that has a Content-Length (413); a route
// that takes a body sent chunked or unframed reads it in pieces and keeps at
// most this much (cpp-httplib would hold it whole).
inline constexpr size_t kMaxBodyBytes = size_t{1} << 20;

// cpp-httplib reads the body of a PRI request (HTTP/2's preface method, for
// which it has no route type) whole into memory before finding no route, the
// body of a DELETE only when it has a Content-Length, and none of a GET,
// HEAD, OPTIONS, TRACE or CONNECT, leaving it to be read as the connection's
// next request. (A method it does not know it refuses before any handler, its
// body unread: README says so.) All are routed as a PATCH, which
// no server here takes, so that Start's catch-all route drains the body and
// refuses it under their own method again: 404 for PRI and DELETE (no
// route), 400 for the methods that take no body. Start's pre-routing handler
// calls this; one that replaces it calls it first.
void RouteUnreadBodiesToTheDrain(httplib::Request& request);

// Whether `request` carries a body although its method takes none here,
// which RouteUnreadBodiesToTheDrain has refused with 400.
bool CarriesABodyOfAMethodThatTakesNone(const httplib::Request& request);

// TCP keepalive for connections whose handler waits long with nothing to
// send or read, as one waiting for a generation: a peer silent for `idle`
// is probed, and the connection of one that answers no probe for about
// `timeout` fails, which the handler sees (PeerHasClosed). TCP counts whole
// seconds, at least 1 and at most 32767; both are rounded up into that.
struct TcpKeepalive {
  absl::Duration idle;
  absl::Duration timeout;
};

class HttpServer {
 public:
  using AddRoutes = std::function<void(httplib::Server&)>;

  // Listens on `host`:`port` (port 0 picks a free one) with `threads`
  // handler threads; each connection holds one while it is open, so a
  // handler that waits for a generation needs one per admitted request.
  // `add_routes` adds the routes; those that take a body take it with a
  // ContentReader (cpp-httplib tries them before the others, whatever the
  // order). A body sent where none takes one is read and dropped before the
  // 404: cpp-httplib would hold it whole in memory.
  // HTTPS with `tls` (which must outlive the server), plain HTTP without.
  // Connections are probed with `keepalive` when given. UNAVAILABLE naming
  // the address when it cannot be bound; INTERNAL when OpenSSL cannot be
  // set up.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const std::string& host, int port, int threads,
      const AddRoutes& add_routes, const TlsIdentity* tls = nullptr,
      std::optional<TcpKeepalive> keepalive = std::nullopt);
  // Stops accepting, then waits for the handlers that are running.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }

 private:
  HttpServer(std::unique_ptr<httplib::Server> server, int port);

  std::unique_ptr<httplib::Server> server_;
  const int port_;
  std::atomic<bool> listen_returned_{false};
  std::thread thread_;
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_HTTP_SERVER_H_
