// ditserve-golden-check [--verbose] [--device cuda] CASE_DIR...
//
// Runs golden case folders (shared/golden/README.md format) and prints one
// line per case: PASS/FAIL, the largest absolute and relative errors over all
// outputs, and the tolerance of the output closest to (or furthest past) its
// limit. Exit status 0 only if every case passes; 1 if any fails or cannot
// run (an unknown kind included); 2 on bad usage.

#include <ATen/Context.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/debugging/failure_signal_handler.h"
#include "absl/debugging/symbolize.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/engine/compute_target.h"
#include "tools/golden_check/golden_case.h"
#include "tools/golden_check/runners.h"

namespace ditserve::golden {
namespace {

constexpr char kUsage[] =
    "usage: ditserve-golden-check [--verbose] [--device cpu|cuda] "
    "CASE_DIR...\n"
    "  Runs each golden case folder and compares with its stored outputs.\n"
    "  --verbose  also print one line per compared output\n"
    "  --device   where the models run, in float32 (default cpu)\n";

std::string DescribeTolerance(const Tolerance& tolerance) {
  std::string text =
      absl::StrFormat("atol %.1e rtol %.1e", tolerance.atol, tolerance.rtol);
  if (tolerance.max_fraction_differing.has_value()) {
    absl::StrAppendFormat(&text, " max differing %.2g%%",
                          *tolerance.max_fraction_differing * 100);
  }
  return text;
}

void PrintComparison(const OutputComparison& c) {
  std::printf("    %s %-40s max_abs_err %.3e max_rel_err %.3e %s%s%s\n",
              c.pass ? "ok  " : "FAIL", c.name.c_str(), c.max_abs_err,
              c.max_rel_err, DescribeTolerance(c.tolerance).c_str(),
              c.problem.empty() ? "" : ": ", c.problem.c_str());
}

// Runs one case and prints its line; true if it passed.
bool RunCase(const std::string& dir, const models::Placement& placement,
             bool verbose) {
  absl::StatusOr<GoldenCase> golden_case = ReadGoldenCase(dir);
  if (!golden_case.ok()) {
    std::printf("ERROR %s: %s\n", dir.c_str(),
                std::string(golden_case.status().message()).c_str());
    return false;
  }
  golden_case->placement = placement;
  const RunnerEntry* runner = FindRunner(golden_case->kind);
  if (runner == nullptr) {
    std::printf("ERROR %s: unknown case kind \"%s\" (known: %s)\n", dir.c_str(),
                golden_case->kind.c_str(),
                absl::StrJoin(RegisteredKinds(), ", ").c_str());
    return false;
  }
  absl::StatusOr<std::vector<OutputComparison>> comparisons =
      runner->run(*golden_case);
  if (!comparisons.ok()) {
    std::printf("ERROR %s (%s): %s\n", dir.c_str(), golden_case->kind.c_str(),
                std::string(comparisons.status().message()).c_str());
    return false;
  }
  if (comparisons->empty()) {
    std::printf("ERROR %s (%s): the case compared no outputs\n", dir.c_str(),
                golden_case->kind.c_str());
    return false;
  }
  double max_abs_err = 0;
  double max_rel_err = 0;
  int failed = 0;
  const OutputComparison* worst = &comparisons->front();
  for (const OutputComparison& c : *comparisons) {
    max_abs_err = std::max(max_abs_err, c.max_abs_err);
    max_rel_err = std::max(max_rel_err, c.max_rel_err);
    if (!c.pass) ++failed;
    if (c.worst_ratio > worst->worst_ratio) worst = &c;
  }
  const bool pass = failed == 0;
  std::printf(
      "%s %s (%s): %zu outputs, max_abs_err %.3e, max_rel_err %.3e, "
      "tolerance %s (worst: %s at %.2f of its limit)",
      pass ? "PASS" : "FAIL", dir.c_str(), golden_case->kind.c_str(),
      comparisons->size(), max_abs_err, max_rel_err,
      DescribeTolerance(worst->tolerance).c_str(), worst->name.c_str(),
      worst->worst_ratio);
  if (!pass) std::printf(", %d outputs out of tolerance", failed);
  std::printf("\n");
  for (const OutputComparison& c : *comparisons) {
    if (verbose || !c.pass) PrintComparison(c);
  }
  return pass;
}

}  // namespace
}  // namespace ditserve::golden

int main(int argc, char** argv) {
  // A crash prints its stack: the GPU machines this runs on have no
  // debugger.
  absl::InitializeSymbolizer(argv[0]);
  absl::InstallFailureSignalHandler(absl::FailureSignalHandlerOptions());
  bool verbose = false;
  std::string device = "cpu";
  std::vector<std::string> dirs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--verbose" || arg == "-v") {
      verbose = true;
    } else if (arg == "--device" && i + 1 < argc) {
      device = argv[++i];
    } else if (arg.rfind("--device=", 0) == 0) {
      device = arg.substr(sizeof("--device=") - 1);
    } else if (arg == "--help" || arg == "-h") {
      std::fputs(ditserve::golden::kUsage, stdout);
      return 0;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "unknown flag %s\n%s", arg.c_str(),
                   ditserve::golden::kUsage);
      return 2;
    } else {
      dirs.push_back(arg);
    }
  }
  if (dirs.empty()) {
    std::fputs(ditserve::golden::kUsage, stderr);
    return 2;
  }
  absl::StatusOr<ditserve::engine::ComputeTarget> target =
      ditserve::engine::ParseComputeTarget(device, "float32",
                                           /*local_rank=*/0);
  if (!target.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(target.status().message()).c_str());
    return 2;
  }
  // The references are float32 all through; cuDNN's default TF32
  // convolutions would round their inputs to 10 mantissa bits (LibTorch's
  // cuBLAS matmuls already stay float32 by default).
  at::globalContext().setAllowTF32CuDNN(false);
  // Loaders log at info; the per-case lines are the output here.
  spdlog::set_level(spdlog::level::warn);
  int failed = 0;
  for (const std::string& dir : dirs) {
    if (!ditserve::golden::RunCase(dir, target->placement, verbose)) ++failed;
  }
  if (dirs.size() > 1) {
    std::printf("%zu of %zu cases passed\n", dirs.size() - failed, dirs.size());
  }
  return failed == 0 ? 0 : 1;
}
