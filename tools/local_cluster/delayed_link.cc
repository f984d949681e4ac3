#include "tools/local_cluster/delayed_link.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <deque>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ditserve::local_cluster {
namespace {

using Clock = std::chrono::steady_clock;

// How often an idle direction checks whether the link is being destroyed.
constexpr std::chrono::milliseconds kIdlePoll{50};
// Larger than any packet of an interface with the default MTU of 1500.
constexpr size_t kMaxPacket = 65536;

// A TUN interface `name` carrying bare IP packets, non-blocking.
absl::StatusOr<int> OpenTun(const std::string& name) {
  const int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open /dev/net/tun: ", std::strerror(errno)));
  }
  ifreq request{};
  request.ifr_flags = IFF_TUN | IFF_NO_PI;
  std::strncpy(request.ifr_name, name.c_str(), IFNAMSIZ - 1);
  if (ioctl(fd, TUNSETIFF, &request) != 0) {
    const int error = errno;
    close(fd);
    return absl::InternalError(absl::StrCat("cannot make TUN interface ", name,
                                            ": ", std::strerror(error)));
  }
  return fd;
}

}  // namespace

absl::StatusOr<std::unique_ptr<DelayedLink>> DelayedLink::Create(
    const std::string& name_a, const std::string& name_b,
    std::chrono::microseconds delay) {
  absl::StatusOr<int> end_a = OpenTun(name_a);
  if (!end_a.ok()) return end_a.status();
  absl::StatusOr<int> end_b = OpenTun(name_b);
  if (!end_b.ok()) {
    close(*end_a);
    return end_b.status();
  }
  return std::unique_ptr<DelayedLink>(new DelayedLink(*end_a, *end_b, delay));
}

DelayedLink::DelayedLink(int end_a, int end_b, std::chrono::microseconds delay)
    : end_a_(end_a), end_b_(end_b), delay_(delay) {
  a_to_b_ = std::thread([this] { Carry(end_a_, end_b_); });
  b_to_a_ = std::thread([this] { Carry(end_b_, end_a_); });
}

DelayedLink::~DelayedLink() {
  stop_ = true;
  a_to_b_.join();
  b_to_a_.join();
  close(end_a_);
  close(end_b_);
}

void DelayedLink::Carry(int from, int to) {
  std::deque<std::pair<Clock::time_point, std::string>> in_flight;
  std::string buffer(kMaxPacket, '\0');
  while (!stop_) {
    const Clock::duration wait =
        in_flight.empty() ? Clock::duration(kIdlePoll)
                          : std::max(Clock::duration::zero(),
                                     in_flight.front().first - Clock::now());
    const auto nanoseconds =
        std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
    const timespec timeout{.tv_sec = nanoseconds / 1000000000,
                           .tv_nsec = nanoseconds % 1000000000};
    pollfd readable{.fd = from, .events = POLLIN, .revents = 0};
    if (ppoll(&readable, 1, &timeout, nullptr) > 0 &&
        (readable.revents & POLLIN) != 0) {
      ssize_t size;
      while ((size = read(from, buffer.data(), buffer.size())) > 0) {
        in_flight.emplace_back(Clock::now() + delay_,
                               buffer.substr(0, static_cast<size_t>(size)));
      }
    }
    const Clock::time_point now = Clock::now();
    while (!in_flight.empty() && in_flight.front().first <= now) {
      // An end that is down refuses the packet: it is lost, as on a wire.
      const std::string& packet = in_flight.front().second;
      (void)!write(to, packet.data(), packet.size());
      in_flight.pop_front();
    }
  }
}

}  // namespace ditserve::local_cluster
