#include "tools/local_cluster/serving_cluster.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <regex>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/base/status_macros.h"
#include "grpcpp/grpcpp.h"
#include "tools/local_cluster/http_get.h"

namespace ditserve::local_cluster {
namespace {

// Loading LibTorch, making the default model the first time and joining the
// group on two busy cores.
constexpr std::chrono::seconds kStartLimit{120};
constexpr std::chrono::milliseconds kPollInterval{50};

// Whether something accepts TCP connections on 127.0.0.1:`port`.
bool AcceptsConnections(int port) {
  const int fd = ConnectToLoopback(port);
  if (fd < 0) return false;
  close(fd);
  return true;
}

}  // namespace

std::unique_ptr<grpc::ClientContext> ContextWithDeadline(double seconds) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(
      std::chrono::system_clock::now() +
      std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
  return context;
}

double MetricValue(const std::string& exposition, const std::string& metric,
                   const std::vector<std::string>& labels) {
  double total = 0;
  for (absl::string_view line : absl::StrSplit(exposition, '\n')) {
    if (!absl::StartsWith(line, metric + "{") &&
        !absl::StartsWith(line, metric + " ")) {
      continue;
    }
    bool matches = true;
    for (const std::string& label : labels) {
      matches = matches && absl::StrContains(line, label);
    }
    if (!matches) continue;
    const size_t space = line.rfind(' ');
    total += std::stod(std::string(line.substr(space + 1)));
  }
  return total;
}

v1::GenerateRequest SmallRequest(const std::string& prompt) {
  v1::GenerateRequest request;
  request.add_prompt(prompt);
  request.set_height(64);
  request.set_width(48);
  request.set_num_inference_steps(2);
  request.set_seed(7);
  request.set_max_sequence_length(32);
  return request;
}

v1::GenerateRequest ParallelParityRequest() {
  v1::GenerateRequest request = SmallRequest("a lighthouse at dusk");
  request.set_height(80);
  request.add_prompt("a fox in the snow");
  request.add_prompt("three red boats on a calm lake");
  request.set_output_format(v1::OUTPUT_FORMAT_LATENT_F32);
  return request;
}

std::string StartUpFailure(const ClusterOptions& options) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(options);
  if (cluster.ok()) return "the group started";
  return std::string(cluster.status().message());
}

std::vector<float> LatentFloats(const v1::Image& image) {
  std::vector<float> values(image.data().size() / sizeof(float));
  std::memcpy(values.data(), image.data().data(),
              values.size() * sizeof(float));
  return values;
}

float MaxLatentDifference(const v1::GenerateResponse& a,
                          const v1::GenerateResponse& b) {
  constexpr float kUnequal = std::numeric_limits<float>::infinity();
  if (a.images_size() != b.images_size()) return kUnequal;
  float largest = 0;
  for (int image = 0; image < a.images_size(); ++image) {
    const std::vector<float> from_a = LatentFloats(a.images(image));
    const std::vector<float> from_b = LatentFloats(b.images(image));
    if (from_a.size() != from_b.size()) return kUnequal;
    for (size_t i = 0; i < from_a.size(); ++i) {
      const float difference = std::abs(from_a[i] - from_b[i]);
      if (!std::isfinite(difference)) return kUnequal;
      largest = std::max(largest, difference);
    }
  }
  return largest;
}

namespace {

// Starts the ranks of `options`, the host serving on the given ports.
absl::StatusOr<std::unique_ptr<RankLauncher>> LaunchOnPorts(
    const ClusterOptions& options, int grpc_port, int metrics_port,
    int http_port) {
  std::vector<std::string> host_flags = {
      absl::StrCat("--grpc_port=", grpc_port),
      absl::StrCat("--metrics_port=", metrics_port),
      absl::StrCat("--http_port=", http_port), "--listen=127.0.0.1"};
  host_flags.insert(host_flags.end(), options.host_flags.begin(),
                    options.host_flags.end());
  std::vector<std::string> rank_flags = {
      absl::StrCat("--model_cache_dir=", DITSERVE_TEST_MODEL_CACHE),
      "--threads=1"};
  rank_flags.insert(rank_flags.end(), options.rank_flags.begin(),
                    options.rank_flags.end());
  return RankLauncher::Start(
      DITSERVE_RANK_DISPATCH, rank_flags, options.world_size,
      {absl::StrCat("DITSERVE_HOST=", DITSERVE_HOST_BINARY),
       absl::StrCat("DITSERVE_WORKER=", DITSERVE_WORKER_BINARY),
       absl::StrCat("DITSERVE_HOST_ARGS=", absl::StrJoin(host_flags, " ")),
       absl::StrCat("DITSERVE_WORKER_ARGS=",
                    absl::StrJoin(options.worker_flags, " "))},
      options.placement);
}

}  // namespace

absl::StatusOr<std::unique_ptr<RankLauncher>> LaunchRanks(
    const ClusterOptions& options) {
  ASSIGN_OR_RETURN(int grpc_port, PickFreePort());
  ASSIGN_OR_RETURN(int metrics_port, PickFreePort());
  ASSIGN_OR_RETURN(int http_port, PickFreePort());
  return LaunchOnPorts(options, grpc_port, metrics_port, http_port);
}

absl::StatusOr<std::unique_ptr<ServingCluster>> ServingCluster::Start(
    const ClusterOptions& options) {
  std::unique_ptr<ServingCluster> cluster(new ServingCluster());
  ASSIGN_OR_RETURN(cluster->grpc_port_, PickFreePort());
  ASSIGN_OR_RETURN(cluster->metrics_port_, PickFreePort());
  ASSIGN_OR_RETURN(cluster->http_port_, PickFreePort());
  const int grpc_port = cluster->grpc_port_;
  ASSIGN_OR_RETURN(cluster->ranks_,
                   LaunchOnPorts(options, grpc_port, cluster->metrics_port_,
                                 cluster->http_port_));

  const auto give_up = std::chrono::steady_clock::now() + kStartLimit;
  // A rank that exits during start-up ends the wait: the group cannot serve.
  const auto starting = [&] {
    return std::chrono::steady_clock::now() < give_up &&
           cluster->ranks_->Exited().empty();
  };
  // The channel is made once the host listens: a channel whose first
  // connection was refused keeps failing fast for seconds (gRPC backoff).
  while (starting() && !AcceptsConnections(grpc_port)) {
    std::this_thread::sleep_for(kPollInterval);
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  auto channel = grpc::CreateCustomChannel(
      cluster->address(),
      options.credentials != nullptr ? options.credentials
                                     : grpc::InsecureChannelCredentials(),
      args);
  cluster->generation_ = v1::Generation::NewStub(channel);
  cluster->health_ = grpc::health::v1::Health::NewStub(channel);

  while (starting()) {
    absl::StatusOr<grpc::health::v1::HealthCheckResponse::ServingStatus>
        status = cluster->HealthStatus();
    if (status.ok() &&
        *status == grpc::health::v1::HealthCheckResponse::SERVING) {
      return cluster;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  std::string logs;
  for (int rank = 0; rank < options.world_size; ++rank) {
    absl::StrAppend(&logs, "\n--- rank ", rank, " ---\n",
                    cluster->ranks_->Output(rank));
  }
  if (const std::vector<int> exited = cluster->ranks_->Exited();
      !exited.empty()) {
    return absl::UnavailableError(
        absl::StrCat("ranks ", absl::StrJoin(exited, ", "),
                     " exited before the group reported SERVING", logs));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("the group did not report SERVING in time", logs));
}

double SecondsUntilHealth(
    ServingCluster& cluster,
    grpc::health::v1::HealthCheckResponse::ServingStatus wanted,
    double limit_seconds) {
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    absl::StatusOr<grpc::health::v1::HealthCheckResponse::ServingStatus>
        health = cluster.HealthStatus();
    if (health.ok() && *health == wanted) return waited;
    if (waited > limit_seconds) return -1;
    std::this_thread::sleep_for(kPollInterval);
  }
}

std::string ServingCluster::address() const {
  return absl::StrCat("127.0.0.1:", grpc_port_);
}

absl::StatusOr<grpc::health::v1::HealthCheckResponse::ServingStatus>
ServingCluster::HealthStatus() {
  auto context = ContextWithDeadline(2);
  grpc::health::v1::HealthCheckRequest request;
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status status = health_->Check(context.get(), request, &response);
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        status.error_message());
  }
  return response.status();
}

absl::StatusOr<v1::GenerateResponse> ServingCluster::Generate(
    const v1::GenerateRequest& request, double seconds) {
  auto context = ContextWithDeadline(seconds);
  v1::GenerateResponse response;
  const grpc::Status status =
      generation_->Generate(context.get(), request, &response);
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        status.error_message());
  }
  return response;
}

absl::StatusOr<std::string> ServingCluster::ScrapeMetrics() const {
  return HttpGet(metrics_port_, "/metrics");
}

void ServingCluster::Terminate() { ranks_->Signal(0, SIGTERM); }

double RgbPsnr(const v1::GenerateResponse& expected,
               const v1::GenerateResponse& actual) {
  if (actual.images_size() != expected.images_size()) return 0;
  double squared = 0;
  int64_t count = 0;
  for (int image = 0; image < expected.images_size(); ++image) {
    const std::string& want = expected.images(image).data();
    const std::string& got = actual.images(image).data();
    if (got.size() != want.size()) return 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const double error = static_cast<double>(static_cast<uint8_t>(got[i])) -
                           static_cast<uint8_t>(want[i]);
      squared += error * error;
      ++count;
    }
  }
  if (squared == 0) return INFINITY;
  return 10 * std::log10(255.0 * 255.0 / (squared / count));
}

int64_t TransformerBytes(ServingCluster& cluster, int rank) {
  static const std::regex kLine(R"((\d+) bytes of transformer weights)");
  const std::string output = cluster.ranks().Output(rank);
  std::smatch match;
  if (!std::regex_search(output, match, kLine)) return -1;
  return std::stoll(match[1]);
}

}  // namespace ditserve::local_cluster
