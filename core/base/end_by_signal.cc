#include "core/base/end_by_signal.h"

#include <pthread.h>
#include <unistd.h>

#include <csignal>

namespace ditserve::base {

void EndBySignal(int signal) {
  std::signal(signal, SIG_DFL);
  // Inside a handler the signal is blocked, and raise would only leave it
  // pending.
  sigset_t own;
  sigemptyset(&own);
  sigaddset(&own, signal);
  pthread_sigmask(SIG_UNBLOCK, &own, nullptr);
  std::raise(signal);
  _exit(128 + signal);
}

}  // namespace ditserve::base
