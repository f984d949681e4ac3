#ifndef DITSERVE_CLIENTS_DITCTL_ERROR_MESSAGES_H_
#define DITSERVE_CLIENTS_DITCTL_ERROR_MESSAGES_H_

#include <string>

#include "grpcpp/support/status.h"

namespace ditserve::ditctl {

// One line for a user: what the status code means for them, what to do, and
// the server's own message.
std::string DescribeError(const grpc::Status& status,
                          const std::string& server_address);

}  // namespace ditserve::ditctl

#endif  // DITSERVE_CLIENTS_DITCTL_ERROR_MESSAGES_H_
