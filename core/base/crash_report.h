#ifndef DITSERVE_CORE_BASE_CRASH_REPORT_H_
#define DITSERVE_CORE_BASE_CRASH_REPORT_H_

namespace ditserve::base {

// On a fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP) writes the
// signal and the symbolized stack of the thread that took it to stderr, then
// ends the process by that signal, as its default action would. A rank that
// crashes in a native library (a CUDA runtime, LibTorch, an HTTP server)
// otherwise leaves only its exit status, and the machine it crashed on is
// often gone by the time anyone could attach a debugger. SIGTERM keeps the
// handler it had, so a rank's own stop handling stays in charge of it.
// `argv0` is the program's argv[0], for the symbolizer.
void InstallCrashReport(const char* argv0);

}  // namespace ditserve::base

#endif  // DITSERVE_CORE_BASE_CRASH_REPORT_H_
