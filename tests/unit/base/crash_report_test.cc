#include "core/base/crash_report.h"

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include "absl/base/config.h"
#include "absl/debugging/stacktrace.h"
#include "gtest/gtest.h"

namespace ditserve::base {
namespace {

constexpr char kThisProgram[] = "/proc/self/exe";

// Neither inlined nor reduced to a tail call, so that its own frame is on the
// stack the report prints.
[[gnu::noipa]] int FaultInAFunctionNamedForTheReport() {
  return std::raise(SIGSEGV) + 1;
}

void DrainOnStop(int /*signal*/) {}

// An unwinder that faults, as one walking a smashed stack may.
int FaultWhileUnwinding(void** /*pcs*/, int* /*sizes*/, int /*max_depth*/,
                        int /*skip_count*/, const void* /*context*/,
                        int* /*min_dropped_frames*/) {
  return std::raise(SIGBUS);
}

// Whether this process may make a PID namespace (root, or CAP_SYS_ADMIN).
bool CanMakePidNamespace() {
  const pid_t probe = fork();
  if (probe == 0) _exit(unshare(CLONE_NEWPID) == 0 ? 0 : 1);
  int status = 0;
  return probe > 0 && waitpid(probe, &status, 0) == probe &&
         WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

class CrashReportDeathTest : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef ABSL_HAVE_ADDRESS_SANITIZER
    GTEST_SKIP() << "InstallCrashReport leaves faults to AddressSanitizer";
#endif
    // Each test installs the handlers in a child process, leaving the test
    // binary's own alone.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
  }
};

TEST_F(CrashReportDeathTest, AFaultWritesItsSignalAndSymbolizedStack) {
  EXPECT_EXIT(
      {
        InstallCrashReport(kThisProgram);
        FaultInAFunctionNamedForTheReport();
      },
      testing::KilledBySignal(SIGSEGV),
      "SIGSEGV received.*FaultInAFunctionNamedForTheReport");
}

// A container's PID 1 ignores a signal it raises at its default action,
// which is how Abseil's handler ends: the process must still end after the
// report (with the shell's code for the signal, as EndBySignal does), not
// return into the code that faulted. (Its frames go unnamed here: /proc is
// still the parent namespace's, where the symbolizer finds no such thread.)
TEST_F(CrashReportDeathTest, AsPid1AFaultStillEndsTheProcessAfterTheReport) {
  if (!CanMakePidNamespace()) GTEST_SKIP() << "needs a PID namespace (root)";
  EXPECT_EXIT(
      {
        if (unshare(CLONE_NEWPID) != 0) _exit(2);
        const pid_t first = fork();
        if (first == 0) {
          InstallCrashReport(kThisProgram);
          FaultInAFunctionNamedForTheReport();
          _exit(3);  // Went on after the fault.
        }
        int status = 0;
        if (first < 0 || waitpid(first, &status, 0) != first) _exit(4);
        _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 5);
      },
      testing::ExitedWithCode(128 + SIGSEGV), "SIGSEGV received");
}

// A fault inside the report ends the process by the first fault's signal,
// once, instead of starting the report again.
TEST_F(CrashReportDeathTest, AFaultInsideTheReportEndsByTheFirstSignal) {
  EXPECT_EXIT(
      {
        InstallCrashReport(kThisProgram);
        absl::SetStackUnwinder(FaultWhileUnwinding);
        FaultInAFunctionNamedForTheReport();
      },
      testing::KilledBySignal(SIGSEGV),
      "SIGSEGV received.*a fault inside the crash report; ending");
}

TEST_F(CrashReportDeathTest, SigtermKeepsTheHandlerItHad) {
  EXPECT_EXIT(
      {
        struct sigaction drain {};
        drain.sa_handler = DrainOnStop;
        sigaction(SIGTERM, &drain, nullptr);
        InstallCrashReport(kThisProgram);
        struct sigaction after {};
        sigaction(SIGTERM, nullptr, &after);
        std::_Exit(after.sa_handler == &DrainOnStop ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace ditserve::base
