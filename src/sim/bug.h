// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Always-on simulator self-checks, in the kernel's spirit (BUG_ON/WARN_ON_ONCE).
 *
 * A failed check is a simulator bug, never a user error: it prints the message,
 * then whatever context the running simulation registered (the scheduler state
 * and the seed), and aborts. The context hook is per thread, so simulations on
 * different threads report their own state; there is no process-wide state.
 */
#include <fmt/format.h>

#include <functional>
#include <string>

namespace schedlab {

/// Prints "BUG: <msg>" plus the current thread's context dump, then aborts.
[[noreturn]] void sim_panic_str(const char* file, int line, const std::string& msg);

/// Installs a context dumper for the calling thread; restores the previous one on destruction.
class bug_context_scope {
public:
    explicit bug_context_scope(std::function<std::string()> dump);
    ~bug_context_scope();
    bug_context_scope(const bug_context_scope&) = delete;
    bug_context_scope& operator=(const bug_context_scope&) = delete;

private:
    std::function<std::string()> prev_;
};

} // namespace schedlab

#define sim_panic(...) ::schedlab::sim_panic_str(__FILE__, __LINE__, fmt::format(__VA_ARGS__))

/// Always on, in every build type.
#define SIM_BUG_ON(cond, ...)                                                                      \
    do {                                                                                           \
        if (__builtin_expect(!!(cond), 0))                                                         \
            ::schedlab::sim_panic_str(__FILE__, __LINE__,                                          \
                                      std::string("SIM_BUG_ON(" #cond "): ") +                     \
                                          fmt::format(__VA_ARGS__));                               \
    } while (0)
