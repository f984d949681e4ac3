#include "tools/local_cluster/two_node_network.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "tools/local_cluster/shell_command.h"

namespace ditserve::local_cluster {
namespace {

// Networks made by this process so far: the second of a test differs from
// the first.
std::atomic<int> networks_made{0};

}  // namespace

absl::StatusOr<std::unique_ptr<TwoNodeNetwork>> TwoNodeNetwork::Create(
    std::chrono::microseconds delay) {
  std::unique_ptr<TwoNodeNetwork> network(new TwoNodeNetwork());
  const ShellResult which = RunShell("command -v ip");
  if (which.exit_code != 0) {
    return absl::FailedPreconditionError("iproute2's `ip` is not installed");
  }
  network->ip_ = std::string(absl::StripAsciiWhitespace(which.output));
  const int pid = static_cast<int>(getpid());
  const int serial = networks_made++;
  // Interface names have at most 15 characters; pids at most 7 digits.
  network->interface_a_ = absl::StrCat("dsA", pid, "n", serial % 10);
  network->interface_b_ = absl::StrCat("dsB", pid, "n", serial % 10);
  // A /30 of 10.213.0.0/16 per network, both ends' addresses inside it.
  const int subnet = (pid * 4 + serial) % 16384;
  const std::string first_three_octets =
      absl::StrCat("10.213.", subnet / 64, ".");
  const int first_of_four = (subnet % 64) * 4;
  network->address_a_ = absl::StrCat(first_three_octets, first_of_four + 1);
  network->address_b_ = absl::StrCat(first_three_octets, first_of_four + 2);

  const std::string name = absl::StrCat("ditserve-node-b-", pid, "-", serial);
  if (absl::Status made = network->Ip(absl::StrCat("netns add ", name));
      !made.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot make a network namespace (needs CAP_SYS_ADMIN and "
                     "CAP_NET_ADMIN): ",
                     made.message()));
  }
  network->namespace_ = name;
  if (delay == std::chrono::microseconds(0)) {
    RETURN_IF_ERROR(network->Ip(absl::StrCat(
        "link add ", network->interface_a_, " type veth peer name ",
        network->interface_b_, " netns ", name)));
  } else {
    ASSIGN_OR_RETURN(network->delayed_link_,
                     DelayedLink::Create(network->interface_a_,
                                         network->interface_b_, delay));
    RETURN_IF_ERROR(network->Ip(
        absl::StrCat("link set ", network->interface_b_, " netns ", name)));
  }
  RETURN_IF_ERROR(network->Configure());
  return network;
}

absl::Status TwoNodeNetwork::Configure() {
  const std::string in_b = absl::StrCat("-n ", namespace_, " ");
  RETURN_IF_ERROR(Ip(absl::StrCat("addr add ", address_a_, " peer ", address_b_,
                                  " dev ", interface_a_)));
  RETURN_IF_ERROR(Ip(absl::StrCat(in_b, "addr add ", address_b_, " peer ",
                                  address_a_, " dev ", interface_b_)));
  RETURN_IF_ERROR(Ip(absl::StrCat(in_b, "link set lo up")));
  RETURN_IF_ERROR(Ip(absl::StrCat(in_b, "link set ", interface_b_, " up")));
  return SetLinkUp(true);
}

TwoNodeNetwork::~TwoNodeNetwork() {
  // Deleting either end of a veth pair deletes both; a TUN interface goes
  // with its file descriptor. Either may be gone already.
  if (delayed_link_ == nullptr) {
    RunShell(absl::StrCat(ip_, " link delete ", interface_a_, " 2>/dev/null"));
  }
  delayed_link_.reset();
  if (!namespace_.empty()) {
    RunShell(absl::StrCat(ip_, " netns delete ", namespace_, " 2>&1"));
  }
}

absl::Status TwoNodeNetwork::Ip(const std::string& arguments) const {
  return ShellOutput(absl::StrCat(ip_, " ", arguments, " 2>&1")).status();
}

absl::Status TwoNodeNetwork::SetLinkUp(bool up) {
  return Ip(absl::StrCat("link set ", interface_a_, up ? " up" : " down"));
}

ShellResult TwoNodeNetwork::RunOnNodeB(const std::string& command) const {
  return RunShell(absl::StrCat(ip_, " netns exec ", namespace_, " ", command));
}

void TwoNodeNetwork::KillNodeBProcesses() const {
  RunShell(
      absl::StrCat(ip_, " netns pids ", namespace_, " | xargs -r kill -9"));
}

absl::StatusOr<int64_t> TwoNodeNetwork::BytesCarried() const {
  int64_t total = 0;
  for (const char* counter : {"tx_bytes", "rx_bytes"}) {
    const std::string path =
        absl::StrCat("/sys/class/net/", interface_a_, "/statistics/", counter);
    std::ifstream file(path);
    int64_t bytes = 0;
    if (!(file >> bytes)) {
      return absl::InternalError(absl::StrCat("cannot read ", path));
    }
    total += bytes;
  }
  return total;
}

absl::StatusOr<std::chrono::microseconds> TwoNodeNetwork::RoundTrip() const {
  // Nothing listens in node B's fresh namespace, so its kernel answers the
  // SYN with a reset.
  constexpr int kClosedPort = 9;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(kClosedPort);
  inet_pton(AF_INET, address_b_.c_str(), &address.sin_addr);
  const auto start = std::chrono::steady_clock::now();
  const int connected =
      connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  const int error = errno;
  const auto took = std::chrono::steady_clock::now() - start;
  close(fd);
  if (connected == 0 || error != ECONNREFUSED) {
    return absl::InternalError(absl::StrCat(
        "connecting to ", address_b_, ":", kClosedPort, " was not refused: ",
        connected == 0 ? "it connected" : std::strerror(error)));
  }
  return std::chrono::duration_cast<std::chrono::microseconds>(took);
}

GroupPlacement TwoNodeNetwork::Place(int world_size, int ranks_on_a) const {
  GroupPlacement placement{.master_addr = address_a_};
  for (int rank = 0; rank < world_size; ++rank) {
    if (rank < ranks_on_a) {
      placement.ranks.push_back(
          {.env = {absl::StrCat("GLOO_SOCKET_IFNAME=", interface_a_)}});
    } else {
      placement.ranks.push_back(
          {.command_prefix = {ip_, "netns", "exec", namespace_},
           .env = {absl::StrCat("GLOO_SOCKET_IFNAME=", interface_b_)}});
    }
  }
  return placement;
}

}  // namespace ditserve::local_cluster
