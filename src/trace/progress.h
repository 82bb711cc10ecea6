// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Progress while a large trace is read: one line on stderr, rewritten in place
 * ("\r"), e.g.
 *
 *     schedlab: reading big.txt (pass 2 of 2): 37% (397 of 1024 MiB)
 *
 * at most once per interval of wall-clock time, and cleared when the reading
 * ends. Only when enabled: the callers enable it when stderr is a terminal and
 * --quiet was not given (trace_progress_wanted()), so logs and pipes get no
 * control characters. It reads the wall clock only to throttle what it prints:
 * nothing it does reaches a result.
 */
#include "sim/time.h"

#include <chrono>
#include <ostream>
#include <string>

namespace schedlab {

/// True when progress should be shown: stderr is a terminal and not `quiet`.
bool trace_progress_wanted(bool quiet);

class trace_progress {
public:
    /// `what`: e.g. "reading big.txt (pass 1 of 2)". Disabled: every call does nothing.
    trace_progress(std::ostream& out, std::string what, bool enabled,
                   std::chrono::milliseconds interval = std::chrono::milliseconds(500));
    ~trace_progress();
    trace_progress(const trace_progress&) = delete;
    trace_progress& operator=(const trace_progress&) = delete;

    /// `done` of `total` bytes read (total 0: unknown, e.g. a .dat file: nothing printed).
    /// Cheap: the clock is read once every 4096 calls.
    void update(u64 done, u64 total);
    /// The same with `done()` called only when the line may be printed (every 4096th call
    /// while enabled): a reader's position can cost a system call (a zlib reader's
    /// gzoffset64() is an lseek()), which per event was 40% of a replay's load.
    template <class F> void update_with(F&& done, u64 total)
    {
        if (!enabled_ || total == 0)
            return;
        if (((calls_ + 1) & 4095) != 0) {
            ++calls_;
            return;
        }
        update(done(), total);
    }
    /// Erases the line, if one was printed (the destructor does it too).
    void finish();
    /// Lines printed so far.
    u64 printed() const { return printed_; }

private:
    std::ostream& out_;
    std::string what_;
    bool enabled_;
    std::chrono::milliseconds interval_;
    std::chrono::steady_clock::time_point next_{};
    u64 calls_ = 0;
    u64 printed_ = 0;
    std::size_t width_ = 0; ///< of the last line, to erase it
};

} // namespace schedlab
