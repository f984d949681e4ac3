#include "tools/local_cluster/http_get.h"

#include <httplib.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ditserve::local_cluster {

absl::StatusOr<std::string> HttpGet(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(10, 0);
  client.set_read_timeout(10, 0);
  client.set_write_timeout(10, 0);
  const httplib::Result result = client.Get(path);
  if (!result) {
    return absl::UnavailableError(
        absl::StrCat("GET ", path, " on 127.0.0.1:", port,
                     " failed: ", httplib::to_string(result.error())));
  }
  if (result->status != 200) {
    return absl::InternalError(absl::StrCat("GET ", path, " on port ", port,
                                            " answered ", result->status, ": ",
                                            result->body.substr(0, 200)));
  }
  return result->body;
}

}  // namespace ditserve::local_cluster
