#include "tools/local_cluster/test_certificates.h"

#include <filesystem>
#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tools/local_cluster/shell_command.h"

namespace ditserve::local_cluster {

absl::StatusOr<TestCertificates> MakeTestCertificates(const std::string& dir) {
  std::filesystem::create_directories(dir);
  const std::string key =
      "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  const std::string script = absl::StrCat(
      "set -e\ncd ", dir, "\n", "openssl req -x509 ", key,
      " -days 2 -subj /CN=ditserve-test-ca -keyout ca.key -out ca.pem\n",
      "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > server.ext\n",
      "printf 'extendedKeyUsage=clientAuth\\n' > client.ext\n",
      "for who in server client; do\n", "  openssl req ", key,
      " -subj /CN=$who -keyout $who.key -out $who.csr\n",
      "  openssl x509 -req -in $who.csr -CA ca.pem -CAkey ca.key",
      " -CAcreateserial -days 2 -extfile $who.ext -out $who.pem\n", "done\n");
  const std::string path = dir + "/make-certificates.sh";
  std::ofstream(path) << script;
  const ShellResult made = RunShell(absl::StrCat("bash ", path, " 2>&1"));
  if (made.exit_code != 0) {
    return absl::InternalError(absl::StrCat(
        "openssl could not make test certificates: ", made.output));
  }
  return TestCertificates{dir};
}

}  // namespace ditserve::local_cluster
