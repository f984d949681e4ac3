#ifndef DITSERVE_CORE_ENGINE_STARTUP_FACTS_H_
#define DITSERVE_CORE_ENGINE_STARTUP_FACTS_H_

#include <chrono>
#include <string>

#include "absl/status/statusor.h"
#include "core/config/model_spec.h"
#include "core/engine/compute_target.h"
#include "ditserve/v1/input_config.pb.h"
#include "ditserve/v1/startup.pb.h"

namespace ditserve::engine {

// What every rank must share before it joins a group (dist::AgreeOnStartup):
// the build (ditserve and LibTorch versions), the compute target, every
// parallel degree, the collective timeout, the served model and its
// dimensions, and a fingerprint of the names, dtypes and shapes of every
// tensor in the checkpoint folder's safetensors files. The timeout is there
// because an idle worker waits that long for the host's next ping, which the
// host spaces by its own timeout: a worker's shorter one broke an idle group
// again and again. The fingerprint covers the whole checkpoint rather than
// this rank's shard: a PipeFusion stage's shard is fixed by the checkpoint
// and the degrees, and reading only headers keeps the check to seconds
// before any weights load. Errors name the file that cannot be read.
absl::StatusOr<v1::StartupFacts> DescribeStartup(
    const v1::ParallelConfig& parallel,
    std::chrono::milliseconds collective_timeout, const config::ModelSpec& spec,
    const std::string& model_dir, const ComputeTarget& compute);

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_STARTUP_FACTS_H_
