#include "bench/kineto_trace.h"

#include <torch/csrc/autograd/profiler_kineto.h>

#include <exception>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ditserve::bench {
namespace {

using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

absl::Status StopAndSave(const std::string& path) {
  try {
    torch::autograd::profiler::disableProfiler()->save(path);
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("writing the trace ", path, ": ", e.what()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<double> Traced(
    const std::string& path, bool gpu,
    const std::function<absl::StatusOr<double>()>& op) {
  std::set<ActivityType> activities = {ActivityType::CPU};
  if (gpu) activities.insert(ActivityType::CUDA);
  const ProfilerConfig config(ProfilerState::KINETO);
  try {
    torch::autograd::profiler::prepareProfiler(config, activities);
    torch::autograd::profiler::enableProfiler(config, activities);
  } catch (const std::exception& e) {
    return absl::FailedPreconditionError(
        absl::StrCat("\"trace\" needs LibTorch's Kineto profiler: ", e.what()));
  }
  absl::StatusOr<double> result;
  try {
    result = op();
  } catch (...) {
    // The profiler is process-wide: leave it off for the next command.
    StopAndSave(path).IgnoreError();
    throw;
  }
  absl::Status saved = StopAndSave(path);
  if (!saved.ok()) return saved;
  return result;
}

}  // namespace ditserve::bench
