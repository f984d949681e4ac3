#ifndef DITSERVE_SERVER_MEMORY_ADMISSION_H_
#define DITSERVE_SERVER_MEMORY_ADMISSION_H_

#include <cstdint>

#include "absl/status/status.h"
#include "core/config/model_spec.h"
#include "ditserve/v1/input_config.pb.h"
#include "server/served_model.h"

namespace ditserve::server {

// RESOURCE_EXHAUSTED naming the estimate, the request's size and the limit
// when the served family's estimate of what the frozen `config` adds to rank
// 0's memory (Family::RequestBytes) is above --max_request_bytes (none when
// that is 0), so that one request cannot take the host past its machine's
// memory.
absl::Status CheckRequestMemory(const v1::InputConfig& config,
                                const ServedModel& model);

// Whether the served family's estimate for `config` is at most `limit`
// (always when `limit` is 0): queued requests join one run only while the
// merged run's estimate stays within --max_request_bytes.
bool FitsRequestMemory(const v1::InputConfig& config,
                       const config::ModelSpec& spec, int64_t limit);

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_MEMORY_ADMISSION_H_
