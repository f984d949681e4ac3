#ifndef DITSERVE_SERVER_METRICS_HTTP_SERVER_H_
#define DITSERVE_SERVER_METRICS_HTTP_SERVER_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "prometheus/registry.h"

namespace ditserve::server {

// Serves GET /metrics (Prometheus text format 0.0.4) of one registry over
// HTTP/1.1, one connection at a time, each bounded by a read/write timeout.
//
// Why not prometheus-cpp's Exposer: its civetweb starts worker threads with a
// fixed small stack, and the static TLS of the libraries the host loads
// (OpenBLAS, glog, LibTorch) does not fit in it, so pthread_create fails
// with EINVAL and the exposer never starts.
class MetricsHttpServer {
 public:
  // Listens on `host`:`port` (port 0 picks a free one). UNAVAILABLE naming
  // the address when it cannot be bound.
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(
      const std::string& host, int port,
      std::shared_ptr<prometheus::Registry> registry);
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  int port() const { return port_; }

 private:
  MetricsHttpServer(int listen_fd, int port,
                    std::shared_ptr<prometheus::Registry> registry);
  void AcceptLoop();
  void Answer(int connection) const;

  const int listen_fd_;
  const int port_;
  const std::shared_ptr<prometheus::Registry> registry_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_METRICS_HTTP_SERVER_H_
