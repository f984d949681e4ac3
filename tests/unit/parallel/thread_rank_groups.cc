#include "tests/unit/parallel/thread_rank_groups.h"

#include <algorithm>
#include <thread>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "core/dist/sigpipe.h"

namespace ditserve::testing {

std::vector<parallel::Group> ThreadRankGroups(const std::string& name, int size,
                                              std::chrono::milliseconds wait) {
  // Gloo's own timeout bounds forming the group and how long a collective a
  // test abandons (after `wait`) lingers: the group's destructor waits for
  // it. Forming two to six groups in one process takes milliseconds.
  constexpr std::chrono::milliseconds kMinGlooTimeout{5000};
  const std::chrono::milliseconds gloo_timeout =
      std::max(wait, kMinGlooTimeout);
  dist::IgnoreSigpipe();
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<parallel::Group> groups(size);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      auto options = c10d::ProcessGroupGloo::Options::create(gloo_timeout);
      options->devices.push_back(
          c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      groups[rank] = {.group = c10::make_intrusive<c10d::ProcessGroupGloo>(
                          c10::make_intrusive<c10d::PrefixStore>(name, store),
                          rank, size, options),
                      .context = {.group_name = name, .timeout = wait}};
    });
  }
  for (std::thread& thread : threads) thread.join();
  return groups;
}

}  // namespace ditserve::testing
