// SPDX-License-Identifier: GPL-2.0-only
#include "trace/progress.h"

#include <gtest/gtest.h>

#include <sstream>

namespace schedlab {
namespace {

TEST(trace_progress, prints_throttled_lines_in_place_and_erases_them)
{
    std::ostringstream out;
    {
        trace_progress p(out, "reading t.txt (pass 1 of 2)", true, std::chrono::milliseconds(0));
        p.update(0, 0); // unknown size: nothing
        for (u64 i = 0; i + 1 < 3 * 4096; ++i)
            p.update(i * 1024, 3 * 4096 * 1024); // the clock is read every 4096th call
        EXPECT_EQ(p.printed(), 2u);
    }
    const std::string s = out.str();
    EXPECT_EQ(s.find("\rschedlab: reading t.txt (pass 1 of 2): 33% (4 of 12 MiB)"), 0u) << s;
    EXPECT_NE(s.find("\rschedlab: reading t.txt (pass 1 of 2): 66% (8 of 12 MiB)"),
              std::string::npos)
        << s;
    EXPECT_TRUE(s.ends_with("\r" + std::string(56, ' ') + "\r")) << s; // erased at the end
}

TEST(trace_progress, disabled_prints_nothing)
{
    std::ostringstream out;
    {
        trace_progress p(out, "reading t.txt", false, std::chrono::milliseconds(0));
        for (u64 i = 0; i < 10 * 4096; ++i)
            p.update(i, 10 * 4096);
        EXPECT_EQ(p.printed(), 0u);
    }
    EXPECT_EQ(out.str(), "");
}

TEST(trace_progress, update_with_reads_the_position_only_when_a_line_may_be_printed)
{
    std::ostringstream out;
    u64 reads = 0;
    {
        trace_progress p(out, "reading t.txt", true, std::chrono::milliseconds(0));
        for (u64 i = 0; i < 3 * 4096; ++i)
            p.update_with([&] { return ++reads * 4096; }, 4 * 4096 * 4096);
        EXPECT_EQ(reads, 3u); // the 4096th, 8192nd and 12288th calls
        EXPECT_EQ(p.printed(), 3u);
    }
    trace_progress off(out, "reading t.txt", false);
    for (u64 i = 0; i < 3 * 4096; ++i)
        off.update_with([&] { return ++reads; }, 4096);
    EXPECT_EQ(reads, 3u); // disabled: never
}

TEST(trace_progress, the_interval_throttles)
{
    std::ostringstream out;
    trace_progress p(out, "reading t.txt", true, std::chrono::hours(1));
    for (u64 i = 0; i < 10 * 4096; ++i)
        p.update(i, 10 * 4096);
    EXPECT_EQ(p.printed(), 0u); // the first line is due an interval after the start
}

} // namespace
} // namespace schedlab
