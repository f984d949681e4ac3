// ditserve-bench-soak: a soak test of a real serving group (ditserve-host +
// ditserve-worker processes on loopback, the built-in default model).
// Concurrent clients send a deterministic pseudo-random mix of requests, some
// cancelled and some with deadlines too short to finish, while every rank's
// resident memory, open descriptors and threads are sampled; the host's
// ditserve_requests_total is then checked against what the clients saw.
// Prints one JSON document.
//
//   ditserve-bench-soak [--world_size 2] [--requests 2000] [--clients 8]
//       [--seed 1] [--rank_flags=--dp_degree=2,...]
//
// Exits non-zero when a request got no answer, a rank exited or the host
// stopped reporting SERVING: what a leak or a hang would end in.
#include <sys/types.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "grpcpp/grpcpp.h"
#include "nlohmann/json.hpp"
#include "tools/local_cluster/serving_cluster.h"

ABSL_FLAG(int, world_size, 2, "ranks in the serving group");
ABSL_FLAG(int, requests, 2000, "requests to send, warm-up not included");
ABSL_FLAG(int, clients, 8, "client threads sending at the same time");
ABSL_FLAG(uint64_t, seed, 1, "seed of the request mix");
ABSL_FLAG(int, warmup_requests, 100,
          "requests of a mix of their own sent before the start sample");
ABSL_FLAG(std::vector<std::string>, rank_flags, {},
          "flags for every rank, comma separated (e.g. "
          "--rank_flags=--dp_degree=2)");
ABSL_FLAG(double, sample_interval_s, 0.5,
          "seconds between samples of each rank's RSS, fds and threads");
ABSL_FLAG(double, lost_after_s, 600,
          "a request without a deadline of its own that has no answer after "
          "this many seconds counts as lost");

namespace ditserve::bench {
namespace {

// The statuses the report counts one by one; the rest are "other".
constexpr std::array<const char*, 4> kCountedStatuses = {
    "ok", "cancelled", "deadline_exceeded", "resource_exhausted"};
constexpr char kOther[] = "other";
// How long the host may take to count the requests the clients already gave
// up on (a cancelled run leaves at its next step).
constexpr std::chrono::seconds kSettleLimit{30};

enum class Kind { kNormal, kCancel, kDeadline };

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kCancel:
      return "cancel";
    case Kind::kDeadline:
      return "deadline";
    case Kind::kNormal:
      break;
  }
  return "normal";
}

struct PlannedRequest {
  v1::GenerateRequest request;
  Kind kind = Kind::kNormal;
  bool stream = false;
  // From the call's start: when kCancel cancels it, or kDeadline's deadline.
  std::chrono::milliseconds delay{0};
};

struct Outcome {
  grpc::StatusCode code = grpc::StatusCode::UNKNOWN;
  std::string message;
  double milliseconds = 0;
  // Whether only the bench's safety deadline (--lost_after_s) ended a call
  // that had no deadline of its own: the group never answered it.
  bool lost = false;
};

// The label the host's requests_total gives `code` (server::StatusLabel).
std::string StatusLabel(grpc::StatusCode code) {
  return absl::AsciiStrToLower(
      absl::StatusCodeToString(static_cast<absl::StatusCode>(code)));
}

std::string CountedLabel(grpc::StatusCode code) {
  const std::string label = StatusLabel(code);
  for (const char* counted : kCountedStatuses) {
    if (label == counted) return label;
  }
  return kOther;
}

// Draws the mix from `seed` alone (std::mt19937_64 is specified bit for bit;
// the modulo keeps the mapping independent of the standard library's
// distributions), so two runs with one seed send the same requests.
std::vector<PlannedRequest> PlanRequests(int count, uint64_t seed) {
  std::mt19937_64 random(seed);
  const auto pick = [&random](int low, int high) {
    return low + static_cast<int>(random() % (high - low + 1));
  };
  std::vector<PlannedRequest> plan(count);
  for (int i = 0; i < count; ++i) {
    PlannedRequest& planned = plan[i];
    const int prompts = pick(1, 2);
    for (int j = 0; j < prompts; ++j) {
      planned.request.add_prompt(
          absl::StrCat("soak request ", i, ", a harbour at dawn, view ", j));
    }
    planned.request.set_height(16 * pick(4, 16));
    planned.request.set_width(16 * pick(4, 16));
    planned.request.set_num_inference_steps(pick(1, 4));
    planned.request.set_seed(random() >> 1);
    planned.request.set_max_sequence_length(32);
    const int roll = pick(0, 99);
    if (roll < 10) {
      planned.kind = Kind::kCancel;
      planned.delay = std::chrono::milliseconds(pick(5, 500));
    } else if (roll < 20) {
      // Below the smallest request's run time with the queue this busy, but
      // long enough for the call to reach the host, which counts it.
      planned.kind = Kind::kDeadline;
      planned.delay = std::chrono::milliseconds(pick(20, 200));
    }
    planned.stream = pick(0, 99) < 20;
  }
  return plan;
}

// Cancels `context` after `delay` unless destroyed first (the call ended).
class DelayedCancel {
 public:
  DelayedCancel(grpc::ClientContext* context, std::chrono::milliseconds delay)
      : thread_([this, context, delay] {
          std::unique_lock<std::mutex> lock(mu_);
          if (!ended_cv_.wait_for(lock, delay, [this] { return ended_; })) {
            context->TryCancel();
          }
        }) {}
  ~DelayedCancel() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ended_ = true;
    }
    ended_cv_.notify_all();
    thread_.join();
  }
  DelayedCancel(const DelayedCancel&) = delete;
  DelayedCancel& operator=(const DelayedCancel&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable ended_cv_;
  bool ended_ = false;
  std::thread thread_;
};

// An OK call must bring one image per prompt; anything else is a wrong
// answer, not a success.
grpc::Status CheckImages(const grpc::Status& status, int images, int prompts) {
  if (!status.ok() || images == prompts) return status;
  return grpc::Status(
      grpc::StatusCode::INTERNAL,
      absl::StrCat("OK with ", images, " images for ", prompts, " prompts"));
}

grpc::Status CallUnary(v1::Generation::Stub& stub, grpc::ClientContext& context,
                       const v1::GenerateRequest& request) {
  v1::GenerateResponse response;
  const grpc::Status status = stub.Generate(&context, request, &response);
  return CheckImages(status, response.images_size(), request.prompt_size());
}

grpc::Status CallStream(v1::Generation::Stub& stub,
                        grpc::ClientContext& context,
                        const v1::GenerateRequest& request) {
  std::unique_ptr<grpc::ClientReader<v1::GenerateStreamResponse>> reader =
      stub.GenerateStream(&context, request);
  v1::GenerateStreamResponse message;
  int images = -1;
  while (reader->Read(&message)) {
    if (message.has_result()) images = message.result().images_size();
  }
  return CheckImages(reader->Finish(), images, request.prompt_size());
}

Outcome Send(v1::Generation::Stub& stub, const PlannedRequest& planned) {
  const auto lost_after = std::chrono::milliseconds(
      static_cast<int64_t>(1000 * absl::GetFlag(FLAGS_lost_after_s)));
  grpc::ClientContext context;
  context.set_deadline(
      std::chrono::system_clock::now() +
      (planned.kind == Kind::kDeadline ? planned.delay : lost_after));
  std::optional<DelayedCancel> cancel;
  if (planned.kind == Kind::kCancel) cancel.emplace(&context, planned.delay);
  const auto start = std::chrono::steady_clock::now();
  const grpc::Status status = planned.stream
                                  ? CallStream(stub, context, planned.request)
                                  : CallUnary(stub, context, planned.request);
  Outcome outcome;
  outcome.milliseconds = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  outcome.code = status.error_code();
  outcome.message = status.error_message();
  outcome.lost = planned.kind != Kind::kDeadline &&
                 status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
  return outcome;
}

// One client thread: takes the next unsent request until none is left.
void RunClient(v1::Generation::Stub& stub,
               const std::vector<PlannedRequest>& plan, std::atomic<int>& next,
               std::vector<Outcome>& outcomes) {
  for (int i = next++; i < static_cast<int>(plan.size()); i = next++) {
    outcomes[i] = Send(stub, plan[i]);
  }
}

// One reading of a process's /proc entries; -1 where it could not be read
// (the process is gone).
struct ProcessSample {
  double rss_mib = -1;
  int fds = -1;
  int threads = -1;
};

// Entries in `folder`, or -1 if it cannot be read to the end. Error codes,
// not exceptions: a rank may exit while its fd folder is being read.
int CountEntries(const std::filesystem::path& folder) {
  std::error_code error;
  int count = 0;
  for (std::filesystem::directory_iterator entry(folder, error);
       !error && entry != std::filesystem::directory_iterator();
       entry.increment(error)) {
    ++count;
  }
  return error ? -1 : count;
}

ProcessSample SampleProcess(pid_t pid) {
  ProcessSample sample;
  const std::filesystem::path proc =
      std::filesystem::path("/proc") / std::to_string(pid);
  std::ifstream status(proc / "status");
  std::string line;
  while (std::getline(status, line)) {
    std::istringstream fields(line);
    std::string key;
    int64_t value = 0;
    if (!(fields >> key >> value)) continue;
    if (key == "VmRSS:") sample.rss_mib = value / 1024.0;
    if (key == "Threads:") sample.threads = static_cast<int>(value);
  }
  sample.fds = CountEntries(proc / "fd");
  return sample;
}

// Samples every rank on a thread of its own from construction (the "start"
// sample) to Stop (the "end" sample).
class ResourceSampler {
 public:
  ResourceSampler(std::vector<pid_t> pids, std::chrono::milliseconds interval)
      : pids_(std::move(pids)) {
    SampleAll();
    thread_ = std::thread([this, interval] {
      std::unique_lock<std::mutex> lock(mu_);
      while (!stop_cv_.wait_for(lock, interval, [this] { return stopped_; })) {
        lock.unlock();
        SampleAll();
        lock.lock();
      }
    });
  }
  ~ResourceSampler() { Stop(); }
  ResourceSampler(const ResourceSampler&) = delete;
  ResourceSampler& operator=(const ResourceSampler&) = delete;

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) return;
      stopped_ = true;
    }
    stop_cv_.notify_all();
    thread_.join();
    SampleAll();
  }

  // Per rank: RSS, fds and threads at start, halfway (by sample count), at
  // the end, their maximum and end − start. A leak grows in both halves;
  // caches and pools still settling grow mostly in the first. Call after
  // Stop.
  nlohmann::ordered_json Summary() const {
    nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
    for (size_t rank = 0; rank < pids_.size(); ++rank) {
      ranks.push_back({
          {"rank", rank},
          {"role", rank == 0 ? "host" : "worker"},
          {"rss_mib", Figures(rank, &ProcessSample::rss_mib)},
          {"fds", Figures(rank, &ProcessSample::fds)},
          {"threads", Figures(rank, &ProcessSample::threads)},
      });
    }
    return ranks;
  }

  int samples() const { return static_cast<int>(series_.size()); }

 private:
  void SampleAll() {
    std::vector<ProcessSample> row;
    for (pid_t pid : pids_) row.push_back(SampleProcess(pid));
    std::lock_guard<std::mutex> lock(mu_);
    series_.push_back(std::move(row));
  }

  template <typename T>
  nlohmann::ordered_json Figures(size_t rank, T ProcessSample::*field) const {
    const T start = series_.front()[rank].*field;
    const T mid = series_[series_.size() / 2][rank].*field;
    const T end = series_.back()[rank].*field;
    T max = start;
    for (const std::vector<ProcessSample>& row : series_) {
      max = std::max(max, row[rank].*field);
    }
    const auto round = [](T value) {
      return static_cast<T>(std::round(value * 10) / 10);
    };
    return {{"start", round(start)},
            {"mid", round(mid)},
            {"end", round(end)},
            {"max", round(max)},
            {"growth", round(end - start)}};
  }

  const std::vector<pid_t> pids_;
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopped_ = false;
  std::vector<std::vector<ProcessSample>> series_;
  std::thread thread_;
};

// Counts per counted status ("ok", ..., "other"), every one present.
using StatusCounts = std::map<std::string, int64_t>;

StatusCounts ZeroCounts() {
  StatusCounts counts;
  for (const char* status : kCountedStatuses) counts[status] = 0;
  counts[kOther] = 0;
  return counts;
}

int64_t Total(const StatusCounts& counts) {
  int64_t total = 0;
  for (const auto& [unused, count] : counts) total += count;
  return total;
}

// The host's ditserve_requests_total by counted status.
StatusCounts ServerCounts(const std::string& exposition) {
  constexpr char kMetric[] = "ditserve_requests_total";
  StatusCounts counts = ZeroCounts();
  int64_t named = 0;
  for (const char* status : kCountedStatuses) {
    counts[status] = std::llround(local_cluster::MetricValue(
        exposition, kMetric, {absl::StrCat("status=\"", status, "\"")}));
    named += counts[status];
  }
  counts[kOther] =
      std::llround(local_cluster::MetricValue(exposition, kMetric, {})) - named;
  return counts;
}

StatusCounts Subtract(StatusCounts after, const StatusCounts& before) {
  for (auto& [status, count] : after) count -= before.at(status);
  return after;
}

// What the host counted since `baseline`, once it has counted `expected`
// requests or kSettleLimit passed.
absl::StatusOr<StatusCounts> SettledServerCounts(
    local_cluster::ServingCluster& cluster, const StatusCounts& baseline,
    int64_t expected) {
  const auto give_up = std::chrono::steady_clock::now() + kSettleLimit;
  while (true) {
    absl::StatusOr<std::string> scrape = cluster.ScrapeMetrics();
    if (!scrape.ok()) return scrape.status();
    StatusCounts counts = Subtract(ServerCounts(*scrape), baseline);
    if (Total(counts) >= expected ||
        std::chrono::steady_clock::now() >= give_up) {
      return counts;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// Nearest-rank percentiles of the OK requests' latencies.
nlohmann::ordered_json Latencies(std::vector<double> milliseconds) {
  if (milliseconds.empty()) return nullptr;
  std::sort(milliseconds.begin(), milliseconds.end());
  const auto percentile = [&milliseconds](double p) {
    const size_t rank = static_cast<size_t>(
        std::ceil(p / 100 * static_cast<double>(milliseconds.size())));
    return std::llround(milliseconds[std::max<size_t>(rank, 1) - 1]);
  };
  return {{"p50", percentile(50)},
          {"p95", percentile(95)},
          {"p99", percentile(99)},
          {"max", std::llround(milliseconds.back())}};
}

// Where a request's answer went, tallied over the run.
struct Tally {
  StatusCounts counts = ZeroCounts();
  std::map<std::string, StatusCounts> by_kind;
  std::vector<double> ok_milliseconds;
  // A few "CODE: message" lines of the "other" answers, for the reason.
  std::vector<std::string> other_examples;
  int lost = 0;
};

Tally TallyOutcomes(const std::vector<PlannedRequest>& plan,
                    const std::vector<Outcome>& outcomes) {
  constexpr size_t kExamples = 5;
  Tally tally;
  for (size_t i = 0; i < plan.size(); ++i) {
    const Outcome& outcome = outcomes[i];
    if (outcome.lost) {
      ++tally.lost;
      continue;
    }
    const std::string label = CountedLabel(outcome.code);
    ++tally.counts[label];
    StatusCounts& kind = tally.by_kind[KindName(plan[i].kind)];
    if (kind.empty()) kind = ZeroCounts();
    ++kind[label];
    if (outcome.code == grpc::StatusCode::OK) {
      tally.ok_milliseconds.push_back(outcome.milliseconds);
    } else if (label == kOther && tally.other_examples.size() < kExamples) {
      tally.other_examples.push_back(
          absl::StrCat(StatusLabel(outcome.code), ": ", outcome.message));
    }
  }
  return tally;
}

nlohmann::ordered_json MixSummary(const std::vector<PlannedRequest>& plan) {
  std::map<std::string, int> kinds;
  int streams = 0;
  for (const PlannedRequest& planned : plan) {
    ++kinds[KindName(planned.kind)];
    streams += planned.stream ? 1 : 0;
  }
  return {{"kinds", kinds},
          {"generate_stream", streams},
          {"sizes", "64..256 px per side, multiples of 16"},
          {"steps", "1..4"},
          {"prompts", "1..2"}};
}

// Sends `plan` from --clients threads at once; the seconds it took.
double SendAll(v1::Generation::Stub& stub,
               const std::vector<PlannedRequest>& plan,
               std::vector<Outcome>& outcomes) {
  outcomes.assign(plan.size(), Outcome());
  std::atomic<int> next{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> clients;
  for (int i = 0; i < absl::GetFlag(FLAGS_clients); ++i) {
    clients.emplace_back(RunClient, std::ref(stub), std::cref(plan),
                         std::ref(next), std::ref(outcomes));
  }
  for (std::thread& client : clients) client.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

// A shorter mix of its own seed, so that the start sample is taken once the
// allocators, caches and thread pools have met every size and path; what the
// host counted for it, the baseline of the comparison.
absl::StatusOr<StatusCounts> WarmUp(local_cluster::ServingCluster& cluster) {
  const std::vector<PlannedRequest> plan = PlanRequests(
      absl::GetFlag(FLAGS_warmup_requests), absl::GetFlag(FLAGS_seed) + 0x5eed);
  std::vector<Outcome> outcomes;
  SendAll(cluster.generation(), plan, outcomes);
  const int lost = TallyOutcomes(plan, outcomes).lost;
  if (lost > 0) {
    return absl::DeadlineExceededError(
        absl::StrCat(lost, " warm-up requests got no answer"));
  }
  return SettledServerCounts(cluster, ZeroCounts(),
                             static_cast<int64_t>(plan.size()));
}

absl::Status CheckFlags() {
  if (absl::GetFlag(FLAGS_world_size) < 1 ||
      absl::GetFlag(FLAGS_requests) < 1 || absl::GetFlag(FLAGS_clients) < 1 ||
      absl::GetFlag(FLAGS_warmup_requests) < 0) {
    return absl::InvalidArgumentError(
        "--world_size, --requests and --clients must be ≥ 1, "
        "--warmup_requests ≥ 0");
  }
  if (absl::GetFlag(FLAGS_sample_interval_s) <= 0 ||
      absl::GetFlag(FLAGS_lost_after_s) <= 0) {
    return absl::InvalidArgumentError(
        "--sample_interval_s and --lost_after_s must be > 0");
  }
  return absl::OkStatus();
}

// The client counts, the host's, and the statuses where they differ. The two
// sides may label one request differently: a cancel that crosses the answer,
// or a client deadline the host hears of as a cancel (RST_STREAM) before its
// own copy of the deadline, taken on receipt, passes. Equal totals say the
// host counted every request once.
nlohmann::ordered_json CompareCounts(const StatusCounts& client,
                                     const StatusCounts& server) {
  nlohmann::ordered_json differences = nlohmann::ordered_json::object();
  for (const auto& [status, count] : client) {
    if (server.at(status) != count) {
      differences[status] = server.at(status) - count;
    }
  }
  return {{"client", client},
          {"server_requests_total", server},
          {"totals", {{"client", Total(client)}, {"server", Total(server)}}},
          {"matches", differences.empty()},
          {"server_minus_client", differences}};
}

absl::StatusOr<nlohmann::ordered_json> Run() {
  if (absl::Status flags = CheckFlags(); !flags.ok()) return flags;
  local_cluster::ClusterOptions options;
  options.world_size = absl::GetFlag(FLAGS_world_size);
  options.rank_flags = absl::GetFlag(FLAGS_rank_flags);
  absl::StatusOr<std::unique_ptr<local_cluster::ServingCluster>> started =
      local_cluster::ServingCluster::Start(options);
  if (!started.ok()) return started.status();
  local_cluster::ServingCluster& cluster = **started;
  absl::StatusOr<StatusCounts> baseline = WarmUp(cluster);
  if (!baseline.ok()) return baseline.status();

  const std::vector<PlannedRequest> plan =
      PlanRequests(absl::GetFlag(FLAGS_requests), absl::GetFlag(FLAGS_seed));
  std::vector<pid_t> pids;
  for (int rank = 0; rank < options.world_size; ++rank) {
    pids.push_back(cluster.ranks().pid(rank));
  }
  ResourceSampler sampler(pids,
                          std::chrono::milliseconds(static_cast<int64_t>(
                              1000 * absl::GetFlag(FLAGS_sample_interval_s))));
  std::vector<Outcome> outcomes;
  const double seconds = SendAll(cluster.generation(), plan, outcomes);

  const Tally tally = TallyOutcomes(plan, outcomes);
  // A host that stopped serving cannot be scraped; that is reported, not
  // returned, so the figures still come out.
  const absl::StatusOr<StatusCounts> server = SettledServerCounts(
      cluster, *baseline, static_cast<int64_t>(plan.size()));
  sampler.Stop();
  absl::StatusOr<grpc::health::v1::HealthCheckResponse::ServingStatus> health =
      cluster.HealthStatus();
  const bool serving =
      health.ok() && *health == grpc::health::v1::HealthCheckResponse::SERVING;
  const std::vector<int> exited = cluster.ranks().Exited();

  nlohmann::ordered_json failures = nlohmann::ordered_json::array();
  if (tally.lost > 0) {
    failures.push_back(absl::StrCat(tally.lost, " requests got no answer"));
  }
  if (!serving) failures.push_back("the host stopped reporting SERVING");
  if (!server.ok()) {
    failures.push_back(
        absl::StrCat("scraping /metrics failed: ", server.status().ToString()));
  }
  if (!exited.empty()) {
    failures.push_back(
        absl::StrCat("ranks exited: ", absl::StrJoin(exited, ", ")));
  }
  nlohmann::ordered_json report = {
      {"world_size", options.world_size},
      {"rank_flags", options.rank_flags},
      {"requests", plan.size()},
      {"clients", absl::GetFlag(FLAGS_clients)},
      {"seed", absl::GetFlag(FLAGS_seed)},
      {"warmup_requests", absl::GetFlag(FLAGS_warmup_requests)},
      {"cores", std::thread::hardware_concurrency()},
      {"mix", MixSummary(plan)},
      {"seconds", std::round(seconds * 10) / 10},
      {"requests_per_s", std::round(100 * plan.size() / seconds) / 100},
      {"status", tally.counts},
      {"status_by_kind", tally.by_kind},
      {"ok_latency_ms", Latencies(tally.ok_milliseconds)},
      {"lost", tally.lost},
      {"counts", server.ok() ? CompareCounts(tally.counts, *server)
                             : nlohmann::ordered_json()},
      {"samples", sampler.samples()},
      {"ranks", sampler.Summary()},
      {"serving_at_end", serving},
      {"failures", failures},
  };
  if (!tally.other_examples.empty()) {
    report["other_examples"] = tally.other_examples;
  }
  cluster.Terminate();
  cluster.ranks().WaitAll(std::chrono::seconds(60));
  return report;
}

}  // namespace
}  // namespace ditserve::bench

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "soaks a real serving group with a mix of requests, cancels and "
      "deadlines; prints JSON with status counts, latencies and each rank's "
      "RSS, fds and threads");
  absl::ParseCommandLine(argc, argv);
  absl::StatusOr<nlohmann::ordered_json> report = ditserve::bench::Run();
  if (!report.ok()) {
    std::cerr << report.status() << "\n";
    return 1;
  }
  std::cout << report->dump(2) << "\n";
  return (*report)["failures"].empty() ? 0 : 1;
}
