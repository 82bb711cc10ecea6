// SPDX-License-Identifier: GPL-2.0-only
/*
 * trace-cmd .dat files (docs/replay.md): the bytes as a file, read as `schedlab replay`
 * reads one (load_replay_trace). libtracecmd parses them in a child process
 * (src/trace/ftrace_parse.cc, dat_source), so a crash in libtracecmd is the child's death,
 * which the reader reports as a config_error (exit 2), not a crash of this target; what is a
 * finding here is the parent's side: the frames decoded, the events the replay rebuilds tasks
 * from, and the child reaped with its pipe closed after every input (checked below). An input
 * without the .dat magic is another target's (fuzz_ftrace) and is left out of the corpus.
 *
 * libtracecmd is Debian's build, not instrumented, and runs in the child, whose coverage this
 * process does not see: the fuzzer is guided by what the parent does with the events only.
 * libtracecmd trusts the sizes a file gives: a child's malloc() past libFuzzer's
 * -malloc_limit_mb (the -rss_limit_mb, 2 GB in scripts/run-fuzz.sh) ends the child in
 * libFuzzer's malloc hook, which the child inherited: it prints an out-of-memory report and
 * writes an oom- file to the artifacts directory, then exits; the reader reports the exit
 * status, this target goes on, and the run passes. Such a file is not this target's finding.
 */
#include "fuzz_support.h"
#include "sim/open_descriptors_test_support.h"
#include "workload/replay.h"

#include <pthread.h>
#include <sanitizer/common_interface_defs.h>
#include <sys/wait.h>

#include <fstream>

namespace {

using schedlab::test_support::open_descriptors;

/*
 * A child the reader left: one that ended and was not reaped, or a live fork of this process
 * (its executable is ours). Not any child: the sanitizer runtime may have started
 * llvm-symbolizer to print libFuzzer's NEW_FUNC lines, and it stays.
 */
bool reader_child_left()
{
    siginfo_t si{};
    if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid != 0)
        return true;
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::ifstream in(entry.path() / "stat");
        std::string stat;
        std::getline(in, stat);
        const std::size_t paren = stat.rfind(')'); // the comm may hold spaces and parens
        int ppid = 0;
        char state = 0;
        if (paren == std::string::npos ||
            std::sscanf(stat.c_str() + paren + 1, " %c %d", &state, &ppid) != 2 || ppid != getpid())
            continue;
        std::error_code ec2;
        if (std::filesystem::read_symlink(entry.path() / "exe", ec2) == self)
            return true;
    }
    return false;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    // In the reader's child, a sanitizer report (libtracecmd freeing a bad pointer, say)
    // must end the child only: libFuzzer's death callback would write this input out as the
    // fuzzer's own crash. The child's exit status is what the reader reports.
    pthread_atfork(nullptr, nullptr, [] { __sanitizer_set_death_callback(nullptr); });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace schedlab;
    if (!fuzz::is_trace_cmd_dat(data, size))
        return -1;
    static const fuzz::scratch_file scratch("dat");
    scratch.write(data, size);
    const int fds = open_descriptors();
    fuzz::expect_clean([&] { load_replay_trace(scratch.path, {}); });
    // No child and no descriptor left behind.
    if (reader_child_left())
        __builtin_trap();
    if (open_descriptors() != fds)
        __builtin_trap();
    return 0;
}
