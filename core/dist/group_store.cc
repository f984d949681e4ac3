#include "core/dist/group_store.h"

#include <torch/version.h>

#include <cstdint>
#include <string>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/base/guarded.h"
#include "core/base/monotonic_clock.h"
#include "core/base/status_macros.h"
#include "core/dist/run_failure_board.h"

namespace ditserve::dist {
namespace {

constexpr char kGenerationKey[] = "ditserve/current_generation";
// Set in a generation's namespace once every rank joined it.
constexpr char kFormedKey[] = "formed";
// How often a rank looks for the generation it may join.
constexpr absl::Duration kPoll = absl::Milliseconds(50);
// In a generation's namespace: how many keys its ledger lists, and the
// name of each ("ledger/1" on).
constexpr char kLedgerCountKey[] = "ledger/count";

std::string LedgerEntryKey(int64_t entry) {
  return absl::StrCat("ledger/", entry);
}

std::string GenerationPrefix(int64_t generation) {
  return absl::StrCat("ditserve/g", generation);
}

// A generation's namespace that lists in the generation's ledger each key
// first written through it. One instance per connection (the watchdog has
// its own), so a key written through several is listed more than once,
// which costs its deletion a miss. The RunFailureBoard's keys stay out:
// one entry per failed run would grow with the requests served, and the
// board deletes its posts itself.
class LedgerStore : public c10d::PrefixStore {
 public:
  LedgerStore(int64_t generation, c10::intrusive_ptr<c10d::Store> store)
      : c10d::PrefixStore(GenerationPrefix(generation), std::move(store)) {}

  using c10d::PrefixStore::compareSet;
  using c10d::PrefixStore::set;

  void set(const std::string& key, const std::vector<uint8_t>& value) override {
    List(key);
    c10d::PrefixStore::set(key, value);
  }

  std::vector<uint8_t> compareSet(
      const std::string& key, const std::vector<uint8_t>& expected_value,
      const std::vector<uint8_t>& desired_value) override {
    List(key);
    return c10d::PrefixStore::compareSet(key, expected_value, desired_value);
  }

  int64_t add(const std::string& key, int64_t value) override {
    List(key);
    return c10d::PrefixStore::add(key, value);
  }

#if TORCH_VERSION_MAJOR > 2 || \
    (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
  // Gloo's rendezvous in LibTorch 2.x writes through these where the store
  // has them.
  void append(const std::string& key,
              const std::vector<uint8_t>& value) override {
    List(key);
    c10d::PrefixStore::append(key, value);
  }

  void multiSet(const std::vector<std::string>& keys,
                const std::vector<std::vector<uint8_t>>& values) override {
    for (const std::string& key : keys) List(key);
    c10d::PrefixStore::multiSet(keys, values);
  }
#endif

 private:
  // Before the key is written: an entry whose key was never written costs
  // its deletion a miss, a key without an entry would stay for good.
  void List(const std::string& key) {
    if (absl::StartsWith(key, kRunFailureKeyPrefix)) return;
    {
      absl::MutexLock lock(&mutex_);
      if (listed_.contains(key)) return;
    }
    const int64_t entry = c10d::PrefixStore::add(kLedgerCountKey, 1);
    c10d::PrefixStore::set(LedgerEntryKey(entry),
                           std::vector<uint8_t>(key.begin(), key.end()));
    // Only once its entry is in the store: a write that threw is tried
    // again with the key's next write. Two threads listing one key at once
    // list it twice, which costs its deletion a miss.
    absl::MutexLock lock(&mutex_);
    listed_.insert(key);
  }

  absl::Mutex mutex_;
  absl::flat_hash_set<std::string> listed_ ABSL_GUARDED_BY(mutex_);
};

c10::intrusive_ptr<c10d::Store> ConnectTcpStore(
    const RankEnv& env, bool is_server, std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<std::uint16_t>(env.master_port);
  store_options.isServer = is_server;
  store_options.waitWorkers = false;
  store_options.timeout = timeout;
#if TORCH_VERSION_MAJOR > 2 || \
    (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  // From 2.4 on a TCPStore runs on libuv unless told otherwise, and a
  // LibTorch built without libuv (Debian 13's 2.6) refuses before it
  // listens or connects. The classic backend speaks the same protocol.
  try {
    return c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
  } catch (const c10::Error& error) {
    if (!absl::StrContains(error.what_without_backtrace(), "libuv")) throw;
  }
  store_options.useLibUV = false;
#endif
  return c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
}

}  // namespace

int64_t ReadCurrentGeneration(c10d::Store& store) {
  return store.add(kGenerationKey, 0);
}

int64_t OpenNextGeneration(c10d::Store& store) {
  return store.add(kGenerationKey, 1);
}

c10::intrusive_ptr<c10d::Store> ScopeToGeneration(
    c10::intrusive_ptr<c10d::Store> store, int64_t generation) {
  return c10::make_intrusive<LedgerStore>(generation, std::move(store));
}

absl::Status ForgetGeneration(const c10::intrusive_ptr<c10d::Store>& store,
                              int64_t generation, int world_size) {
  // Not a LedgerStore: reading the ledger must not add to it.
  const auto scoped = c10::make_intrusive<c10d::PrefixStore>(
      GenerationPrefix(generation), store);
  RETURN_IF_ERROR(base::GuardedAs(
      absl::StatusCode::kUnavailable,
      absl::StrCat("deleting the keys of group generation ", generation), [&] {
        // add() would create the count in a generation that listed nothing.
        if (!scoped->check({kLedgerCountKey})) return;
        const int64_t entries = scoped->add(kLedgerCountKey, 0);
        for (int64_t entry = 1; entry <= entries; ++entry) {
          const std::string entry_key = LedgerEntryKey(entry);
          // A rank that died between counting its entry and writing it left
          // none, and get() would wait the store's timeout for it.
          if (!scoped->check({entry_key})) continue;
          const std::vector<uint8_t> key = scoped->get(entry_key);
          scoped->deleteKey(std::string(key.begin(), key.end()));
          scoped->deleteKey(entry_key);
        }
        scoped->deleteKey(kLedgerCountKey);
      }));
  return RunFailureBoard(scoped, world_size).ForgetNewest();
}

absl::StatusOr<std::shared_ptr<GroupStore>> GroupStore::Connect(
    const RankEnv& env, std::chrono::milliseconds timeout) {
  std::shared_ptr<GroupStore> group_store(new GroupStore(env, timeout));
  RETURN_IF_ERROR(base::GuardedAs(
      absl::StatusCode::kUnavailable,
      absl::StrCat("rank ", env.rank, " could not ",
                   env.rank == 0 ? "serve" : "reach",
                   " the store at MASTER_ADDR:PORT ", group_store->address(),
                   " within ", timeout.count(), " ms"),
      [&] {
        group_store->store_ =
            ConnectTcpStore(env, /*is_server=*/env.rank == 0, timeout);
      }));
  return group_store;
}

std::string GroupStore::address() const {
  return absl::StrCat(env_.master_addr, ":", env_.master_port);
}

c10::intrusive_ptr<c10d::Store> GroupStore::Scoped(int64_t generation) const {
  return ScopeToGeneration(store_, generation);
}

absl::StatusOr<c10::intrusive_ptr<c10d::Store>> GroupStore::NewConnection()
    const {
  return base::GuardedAs(
      absl::StatusCode::kUnavailable,
      absl::StrCat("rank ", env_.rank, " could not open another connection to ",
                   "the store at ", address()),
      [&] { return ConnectTcpStore(env_, /*is_server=*/false, timeout_); });
}

absl::StatusOr<int64_t> GroupStore::Current() const {
  return base::GuardedAs(
      absl::StatusCode::kUnavailable,
      absl::StrCat("reading the group generation from the store at ",
                   address()),
      [&] { return ReadCurrentGeneration(*store_); });
}

absl::StatusOr<int64_t> GroupStore::OpenNext() {
  return base::GuardedAs(
      absl::StatusCode::kUnavailable,
      absl::StrCat("opening a group generation in the store at ", address()),
      [&] { return OpenNextGeneration(*store_); });
}

absl::Status GroupStore::MarkFormed(int64_t generation) {
  return base::GuardedAs(
      absl::StatusCode::kUnavailable,
      absl::StrCat("marking group generation ", generation, " formed"),
      [&] { Scoped(generation)->set(kFormedKey, std::vector<uint8_t>{1}); });
}

absl::Status GroupStore::ForgetGenerationsBefore(int64_t generation) {
  // One at a time, so that a failure leaves the rest for the next formation.
  for (; forgotten_below_ < generation; ++forgotten_below_) {
    RETURN_IF_ERROR(
        ForgetGeneration(store_, forgotten_below_, env_.world_size));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> GroupStore::IsFormed(int64_t generation) const {
  return base::GuardedAs(
      absl::StatusCode::kUnavailable,
      absl::StrCat("reading whether group generation ", generation, " formed"),
      [&] { return Scoped(generation)->check({kFormedKey}); });
}

absl::StatusOr<int64_t> GroupStore::GenerationToJoin(
    int64_t after, std::chrono::milliseconds timeout) {
  absl::Time deadline = base::MonotonicNow() + absl::FromChrono(timeout);
  while (true) {
    ASSIGN_OR_RETURN(const int64_t current, Current());
    ASSIGN_OR_RETURN(const bool formed, IsFormed(current));
    if (current > after && !formed) return current;
    // Rank 0 is still trying to form `current` (this rank left it early):
    // its attempt ends within its own timeouts, and then it opens the next.
    if (!formed) deadline = base::MonotonicNow() + absl::FromChrono(timeout);
    if (base::MonotonicNow() >= deadline) {
      return absl::UnavailableError(absl::StrCat(
          "rank 0 opened no group generation for rank ", env_.rank,
          " to join within ", timeout.count(), " ms; the newest, ", current,
          ", is formed or was left (rank 0 has not noticed that this rank's "
          "previous process is gone, or another process runs as RANK=",
          env_.rank, ")"));
    }
    absl::SleepFor(kPoll);
  }
}

}  // namespace ditserve::dist
