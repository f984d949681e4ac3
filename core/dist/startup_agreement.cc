#include "core/dist/startup_agreement.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"

namespace ditserve::dist {
namespace {

constexpr char kWorldSizeFact[] = "world_size";
constexpr char kAbsent[] = "(absent)";
// How long rank 0 keeps the store up after a disagreement so that every
// other rank can still read the facts and name the same difference.
constexpr std::chrono::milliseconds kLingerForVerdicts{5000};

std::string FactsKey(int rank) {
  return absl::StrCat("ditserve/startup/facts/", rank);
}

std::string CheckedKey(int rank) {
  return absl::StrCat("ditserve/startup/checked/", rank);
}

std::map<std::string, std::string> ByName(const v1::StartupFacts& facts) {
  std::map<std::string, std::string> values;
  for (const v1::StartupFact& fact : facts.facts()) {
    values.emplace(fact.name(), fact.value());
  }
  return values;
}

absl::StatusOr<v1::StartupFacts> ReadFacts(c10d::Store& store, int rank,
                                           const StoreWait& wait) {
  absl::Status arrived =
      WaitForKeys(store, {FactsKey(rank)}, wait,
                  absl::StrCat("the start-up facts of rank ", rank));
  if (absl::IsUnavailable(arrived)) {
    return absl::UnavailableError(absl::StrCat(
        arrived.message(),
        " (is it started, with the same MASTER_ADDR:MASTER_PORT?)"));
  }
  RETURN_IF_ERROR(arrived);
  ASSIGN_OR_RETURN(std::vector<uint8_t> bytes,
                   base::GuardedAs(absl::StatusCode::kUnavailable,
                                   absl::StrCat("reading the start-up facts "
                                                "of rank ",
                                                rank),
                                   [&] { return store.get(FactsKey(rank)); }));
  v1::StartupFacts facts;
  if (!facts.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the start-up facts of rank ", rank,
        " do not parse; is it running another build of ditserve?"));
  }
  return facts;
}

// The first disagreement with rank 0 among every rank's facts, or OK.
absl::Status CompareAllRanks(c10d::Store& store, int rank, int world_size,
                             const v1::StartupFacts& mine,
                             const StoreWait& wait) {
  v1::StartupFacts reference = mine;
  if (rank != 0) {
    ASSIGN_OR_RETURN(reference, ReadFacts(store, 0, wait));
  }
  // This rank first, so that a rank that differs names itself at once.
  std::vector<int> order = {rank};
  for (int other = 1; other < world_size; ++other) {
    if (other != rank) order.push_back(other);
  }
  for (int other : order) {
    if (other == 0) continue;
    v1::StartupFacts facts = mine;
    if (other != rank) {
      ASSIGN_OR_RETURN(facts, ReadFacts(store, other, wait));
    }
    const std::vector<std::string> differences =
        DescribeDisagreement(other, facts, reference);
    if (!differences.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "rank ", other, " was started differently from rank 0 (the host): ",
          absl::StrJoin(differences, "; "),
          ". Start every rank with the same flags, model and build"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string> DescribeDisagreement(
    int rank, const v1::StartupFacts& facts,
    const v1::StartupFacts& reference) {
  const std::map<std::string, std::string> values = ByName(facts);
  const std::map<std::string, std::string> reference_values = ByName(reference);
  std::vector<std::string> names;
  for (const v1::StartupFact& fact : reference.facts()) {
    names.push_back(fact.name());
  }
  for (const v1::StartupFact& fact : facts.facts()) {
    if (reference_values.count(fact.name()) == 0) names.push_back(fact.name());
  }
  std::vector<std::string> differences;
  for (const std::string& name : names) {
    const auto value = values.find(name);
    const auto expected = reference_values.find(name);
    const std::string& on_rank =
        value == values.end() ? kAbsent : value->second;
    const std::string& on_host =
        expected == reference_values.end() ? kAbsent : expected->second;
    if (on_rank != on_host) {
      differences.push_back(absl::StrCat(name, " is ", on_rank, " on rank ",
                                         rank, " and ", on_host, " on rank 0"));
    }
  }
  return differences;
}

absl::Status AgreeOnStartup(c10d::Store& store, int rank, int world_size,
                            const v1::StartupFacts& facts,
                            const StoreWait& wait) {
  v1::StartupFacts mine;
  v1::StartupFact* world = mine.add_facts();
  world->set_name(kWorldSizeFact);
  world->set_value(absl::StrCat(world_size));
  mine.MergeFrom(facts);
  const std::string bytes = mine.SerializeAsString();
  RETURN_IF_ERROR(base::GuardedAs(
      absl::StatusCode::kUnavailable,
      absl::StrCat("rank ", rank, " could not publish its start-up facts"),
      [&] {
        store.set(FactsKey(rank),
                  std::vector<uint8_t>(bytes.begin(), bytes.end()));
      }));
  const absl::Status verdict =
      CompareAllRanks(store, rank, world_size, mine, wait);
  // Only a disagreement is worth lingering for: a rank that did not arrive
  // will not read the verdict, and rank 0 re-forming the group must move on.
  if (!absl::IsFailedPrecondition(verdict)) return verdict;
  if (rank == 0) {
    std::vector<std::string> checked;
    for (int other = 1; other < world_size; ++other) {
      checked.push_back(CheckedKey(other));
    }
    // Ranks that never started would keep rank 0 waiting; the linger is
    // bounded, and the verdict stands either way.
    base::GuardedAs(absl::StatusCode::kUnavailable, "", [&] {
      store.wait(checked, std::min(wait.timeout, kLingerForVerdicts));
    }).IgnoreError();
  } else {
    base::GuardedAs(absl::StatusCode::kUnavailable, "", [&] {
      store.set(CheckedKey(rank), std::vector<uint8_t>{1});
    }).IgnoreError();
  }
  return verdict;
}

}  // namespace ditserve::dist
