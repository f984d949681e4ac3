#ifndef DITSERVE_CORE_BASE_END_BY_SIGNAL_H_
#define DITSERVE_CORE_BASE_END_BY_SIGNAL_H_

namespace ditserve::base {

// Ends the process by `signal`, as its default action would. In a
// container a rank is PID 1, whose default actions the kernel ignores: a
// handler calling this is how it stops at all; raise() does nothing there
// either, and it then exits with the shell's code for the signal.
// Async-signal-safe, so it may be the handler itself.
[[noreturn]] void EndBySignal(int signal);

}  // namespace ditserve::base

#endif  // DITSERVE_CORE_BASE_END_BY_SIGNAL_H_
