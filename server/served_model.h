#ifndef DITSERVE_SERVER_SERVED_MODEL_H_
#define DITSERVE_SERVER_SERVED_MODEL_H_

#include <cstdint>
#include <string>

#include "core/config/model_spec.h"
#include "core/config/server_options.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::server {

// What the host serves, as every front end (gRPC, HTTP) describes it.
struct ServedModel {
  config::ModelSpec spec;
  std::string model_dir;
  v1::ParallelConfig parallel;
  config::ServerOptions options;
  // Reported by GetServerInfo.
  std::string version;
  std::string torch_version;
  std::string backend;
  std::string dtype;
  // Each rank's prompt cache capacity (--prompt_cache_mb).
  int64_t prompt_cache_bytes = 0;
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_SERVED_MODEL_H_
