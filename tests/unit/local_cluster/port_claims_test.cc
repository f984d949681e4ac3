#include "tools/local_cluster/port_claims.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "tools/local_cluster/rank_launcher.h"

namespace ditserve::local_cluster {
namespace {

// An error reads as itself, so that it fails any comparison with an outcome.
std::string Outcome(const absl::StatusOr<bool>& claimed) {
  if (!claimed.ok()) return claimed.status().ToString();
  return *claimed ? "claimed" : "refused";
}

std::string FreshClaimsPath(const std::string& name) {
  const std::string path = ::testing::TempDir() + "/" + name;
  unlink(path.c_str());
  return path;
}

TEST(PortClaimsTest, ClaimsOnOneFileExcludeEachOtherUntilTheHolderCloses) {
  const std::string path = FreshClaimsPath("claims-exclude");
  absl::StatusOr<std::unique_ptr<PortClaims>> first = PortClaims::Open(path);
  absl::StatusOr<std::unique_ptr<PortClaims>> second = PortClaims::Open(path);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();

  EXPECT_EQ(Outcome((*first)->Claim(20001)), "claimed");
  EXPECT_EQ(Outcome((*first)->Claim(20001)), "claimed");
  EXPECT_EQ(Outcome((*second)->Claim(20001)), "refused");
  EXPECT_EQ(Outcome((*second)->Claim(20002)), "claimed");
  EXPECT_EQ(Outcome((*first)->Claim(20002)), "refused");

  first->reset();
  EXPECT_EQ(Outcome((*second)->Claim(20001)), "claimed");
}

TEST(PortClaimsTest, AnotherProcessCannotClaimAHeldPort) {
  const std::string path = FreshClaimsPath("claims-process");
  absl::StatusOr<std::unique_ptr<PortClaims>> held = PortClaims::Open(path);
  ASSERT_TRUE(held.ok()) << held.status();
  ASSERT_EQ(Outcome((*held)->Claim(20003)), "claimed");

  // The child uses only async-signal-safe calls: its own open of the file is
  // a new description, as another process's would be.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    struct flock claim {};
    claim.l_type = F_WRLCK;
    claim.l_whence = SEEK_SET;
    claim.l_len = 1;
    claim.l_start = 20003;
    const bool held_port_refused = fcntl(fd, F_OFD_SETLK, &claim) != 0;
    claim.l_start = 20004;
    const bool free_port_granted = fcntl(fd, F_OFD_SETLK, &claim) == 0;
    _exit(fd >= 0 && held_port_refused && free_port_granted ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(PortClaimsTest, PickFreePortClaimsThePortItReturns) {
  absl::StatusOr<int> port = PickFreePort();
  ASSERT_TRUE(port.ok()) << port.status();
  absl::StatusOr<std::unique_ptr<PortClaims>> other =
      PortClaims::Open(PortClaims::DefaultPath());
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(Outcome((*other)->Claim(*port)), "refused");
}

}  // namespace
}  // namespace ditserve::local_cluster
