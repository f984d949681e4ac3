#ifndef DITSERVE_SERVER_MEMORY_ADMISSION_H_
#define DITSERVE_SERVER_MEMORY_ADMISSION_H_

#include "absl/status/status.h"
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

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_MEMORY_ADMISSION_H_
