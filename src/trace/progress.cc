// SPDX-License-Identifier: GPL-2.0-only
#include "trace/progress.h"

#include <fmt/format.h>

#include <unistd.h>

namespace schedlab {

bool trace_progress_wanted(bool quiet)
{
    return !quiet && isatty(STDERR_FILENO) == 1;
}

trace_progress::trace_progress(std::ostream& out, std::string what, bool enabled,
                               std::chrono::milliseconds interval)
    : out_(out), what_(std::move(what)), enabled_(enabled), interval_(interval)
{
    if (enabled_)
        next_ = std::chrono::steady_clock::now() + interval_;
}

trace_progress::~trace_progress()
{
    finish();
}

void trace_progress::update(u64 done, u64 total)
{
    if (!enabled_ || total == 0 || (++calls_ & 4095) != 0)
        return;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_)
        return;
    next_ = now + interval_;
    constexpr double mib = 1024.0 * 1024.0;
    const std::string line =
        fmt::format("schedlab: {}: {}% ({:.0f} of {:.0f} MiB)", what_,
                    std::min<u64>(100, done * 100 / total), static_cast<double>(done) / mib,
                    static_cast<double>(total) / mib);
    out_ << '\r' << line;
    if (line.size() < width_)
        out_ << std::string(width_ - line.size(), ' ');
    out_.flush();
    width_ = std::max(width_, line.size());
    ++printed_;
}

void trace_progress::finish()
{
    if (width_ == 0)
        return;
    out_ << '\r' << std::string(width_, ' ') << '\r';
    out_.flush();
    width_ = 0;
}

} // namespace schedlab
