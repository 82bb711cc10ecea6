// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * SIGINT and SIGTERM during a long command (compare, sweep): the signals are
 * blocked in the calling thread, and so in every thread it starts (the
 * runner's), and taken by a thread of the guard's own with sigtimedwait(). On
 * a signal it calls `on_signal` (which keeps what is finished: waits for a
 * store write in progress, closes the store, prints how to resume) and ends
 * the process with _exit(128 + signal), abandoning the runs in flight: a
 * simulation cannot be stopped mid-way, and a run that has not finished is
 * simply run again by the next invocation.
 *
 * Destroying the guard stops its thread and restores the signal mask (a signal
 * that arrived in between then takes its default action).
 */
#include <atomic>
#include <csignal>
#include <functional>
#include <thread>

namespace schedlab {

class interrupt_guard {
public:
    explicit interrupt_guard(std::function<void(int signo)> on_signal);
    ~interrupt_guard();
    interrupt_guard(const interrupt_guard&) = delete;
    interrupt_guard& operator=(const interrupt_guard&) = delete;

private:
    std::function<void(int)> on_signal_;
    sigset_t old_mask_;
    std::atomic<bool> done_{false};
    std::thread waiter_;
};

/// "SIGINT", "SIGTERM", else "signal N".
const char* signal_name(int signo);

} // namespace schedlab
