// SPDX-License-Identifier: GPL-2.0-only
#include "cli/interrupt.h"

#include <pthread.h>
#include <unistd.h>

#include <ctime>

namespace schedlab {

namespace {

sigset_t interrupt_signals()
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGTERM);
    return s;
}

} // namespace

interrupt_guard::interrupt_guard(std::function<void(int)> on_signal)
    : on_signal_(std::move(on_signal))
{
    const sigset_t set = interrupt_signals();
    pthread_sigmask(SIG_BLOCK, &set, &old_mask_);
    waiter_ = std::thread([this] {
        const sigset_t wait_set = interrupt_signals();
        const timespec tick{0, 100'000'000}; // look at done_ ten times a second
        while (!done_.load()) {
            const int signo = sigtimedwait(&wait_set, nullptr, &tick);
            if (signo == SIGINT || signo == SIGTERM) {
                on_signal_(signo);
                _exit(128 + signo);
            }
        }
    });
}

interrupt_guard::~interrupt_guard()
{
    done_ = true;
    waiter_.join();
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

const char* signal_name(int signo)
{
    switch (signo) {
    case SIGINT:
        return "SIGINT";
    case SIGTERM:
        return "SIGTERM";
    default:
        return "a signal";
    }
}

} // namespace schedlab
