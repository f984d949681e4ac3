#include "core/base/crash_report.h"

#include <execinfo.h>
#include <pthread.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <csignal>
#include <cstring>

#include "absl/base/config.h"
#include "absl/debugging/failure_signal_handler.h"
#include "absl/debugging/stacktrace.h"
#include "absl/debugging/symbolize.h"
#include "core/base/end_by_signal.h"

namespace ditserve::base {
namespace {

constexpr int kMostFrames = 64;

// Abseil's failure signal handler's signals.
constexpr std::array<int, 6> kFaults = {SIGSEGV, SIGILL, SIGFPE,
                                        SIGABRT, SIGBUS, SIGTRAP};

// How long a report may take before the process ends with it unfinished.
// Symbolizing a frame reads its library's symbol table from disk, and
// LibTorch's and CUDA's libraries run to hundreds of MB.
constexpr unsigned kMostReportSeconds = 15;

// Abseil's own x86-64 unwinder follows frame pointers, which neither this
// build nor LibTorch, the CUDA libraries or libc keep: it stops at the first
// frame. glibc's backtrace() unwinds by the call-frame information every
// object carries, through the signal frame too.
int UnwindByCallFrameInformation(void** pcs, int* sizes, int max_depth,
                                 int skip_count, const void* context,
                                 int* min_dropped_frames) {
  void* frames[kMostFrames];
  const int depth = backtrace(frames, kMostFrames);
  // With the faulting thread's context, its stack starts at the faulting
  // instruction; the frames above it are the handler's.
  int first = std::min(depth, skip_count + 1);
  if (context != nullptr) {
    const auto* machine = &static_cast<const ucontext_t*>(context)->uc_mcontext;
#if defined(__x86_64__)
    void* const faulting = reinterpret_cast<void*>(machine->gregs[REG_RIP]);
#elif defined(__aarch64__)
    void* const faulting = reinterpret_cast<void*>(machine->pc);
#else
#error "InstallCrashReport knows the program counter of x86-64 and AArch64"
#endif
    void* const* found = std::find(frames, frames + depth, faulting);
    if (found != frames + depth) first = static_cast<int>(found - frames) + 1;
  }
  const int count = std::min(depth - first, max_depth);
  for (int i = 0; i < count; ++i) {
    pcs[i] = frames[first + i];
    if (sizes != nullptr) sizes[i] = 0;
  }
  if (min_dropped_frames != nullptr) {
    *min_dropped_frames = depth - first - count;
  }
  return count;
}

// Abseil's handlers, which the ones below run.
std::array<struct sigaction, kFaults.size()> reporters;
// The thread writing the report, and the signal it took.
std::atomic<pid_t> reporting_thread{0};
volatile std::sig_atomic_t reported_signal = 0;

void Write(const char* text) {
  [[maybe_unused]] const ssize_t written =
      write(STDERR_FILENO, text, std::strlen(text));
}

// Abseil ends a report by raising the signal at its default action, and its
// alarm by raising SIGABRT so, both of which a container's PID 1 ignores:
// such a rank would carry on after the report, or hang in one. Report ends
// the process itself once Abseil's handler returns, and its alarm does too.
void EndUnfinishedReport(int /*alarm*/) {
  Write("*** the crash report took too long; ending ***\n");
  EndBySignal(reported_signal);
}

// One report, by the first thread that faults. Abseil would write another
// for a fault inside the report (its handlers do not block their signal),
// again and again, and would end the process 3 s into the first report
// when a second thread faults.
void Report(int signal, siginfo_t* info, void* context) {
  const pid_t self = gettid();
  pid_t first = 0;
  if (!reporting_thread.compare_exchange_strong(first, self)) {
    if (first == self) {
      Write("*** a fault inside the crash report; ending ***\n");
      EndBySignal(reported_signal);
    }
    for (;;) pause();
  }
  reported_signal = signal;
  std::signal(SIGALRM, EndUnfinishedReport);
  // The alarm goes to a thread that does not block it: this one.
  sigset_t alarm_only;
  sigemptyset(&alarm_only);
  sigaddset(&alarm_only, SIGALRM);
  pthread_sigmask(SIG_UNBLOCK, &alarm_only, nullptr);
  alarm(kMostReportSeconds);
  for (size_t i = 0; i < kFaults.size(); ++i) {
    if (kFaults[i] == signal) reporters[i].sa_sigaction(signal, info, context);
  }
  EndBySignal(signal);
}

}  // namespace

void InstallCrashReport(const char* argv0) {
  // AddressSanitizer reports a bad address better (what it pointed into),
  // with the stack too.
#ifndef ABSL_HAVE_ADDRESS_SANITIZER
  absl::InitializeSymbolizer(argv0);
  // backtrace() loads libgcc_s on its first call, which a signal handler
  // must not do. Its later calls neither lock nor allocate with GCC 12's
  // libgcc, which finds unwind tables through glibc's lock-free
  // _dl_find_object (older ones take the loader's lock).
  void* warm_up[1];
  backtrace(warm_up, 1);
  absl::SetStackUnwinder(UnwindByCallFrameInformation);
  // Abseil's handler takes SIGTERM too, which for a rank is a request to
  // drain, not a crash.
  struct sigaction stop_handling {};
  sigaction(SIGTERM, nullptr, &stop_handling);
  absl::FailureSignalHandlerOptions options;
  options.alarm_on_failure_secs = 0;
  absl::InstallFailureSignalHandler(options);
  sigaction(SIGTERM, &stop_handling, nullptr);
  for (size_t i = 0; i < kFaults.size(); ++i) {
    sigaction(kFaults[i], nullptr, &reporters[i]);
    struct sigaction report = reporters[i];
    report.sa_sigaction = Report;
    sigaction(kFaults[i], &report, nullptr);
  }
#else
  static_cast<void>(argv0);
#endif
}

}  // namespace ditserve::base
