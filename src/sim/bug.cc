// SPDX-License-Identifier: GPL-2.0-only
#include "sim/bug.h"

#include <cstdio>
#include <cstdlib>

namespace schedlab {

namespace {
thread_local std::function<std::string()> bug_context_dump;
}

bug_context_scope::bug_context_scope(std::function<std::string()> dump)
    : prev_(std::move(bug_context_dump))
{
    bug_context_dump = std::move(dump);
}

bug_context_scope::~bug_context_scope() { bug_context_dump = std::move(prev_); }

void sim_panic_str(const char* file, int line, const std::string& msg)
{
    std::fprintf(stderr, "schedlab: BUG at %s:%d: %s\n", file, line, msg.c_str());
    if (bug_context_dump) {
        // Guard against a dumper that itself trips a check.
        auto dump = std::move(bug_context_dump);
        bug_context_dump = nullptr;
        std::fprintf(stderr, "%s\n", dump().c_str());
    }
    std::fflush(stderr);
    std::abort();
}

} // namespace schedlab
