// SPDX-License-Identifier: GPL-2.0-only
/*
 * make -j N of a modelled kernel tree under /usr/bin/time: see kbuild.h.
 */
#include "workload/kbuild.h"

#include "sched/syscalls.h"
#include "sim/config_error.h"
#include "sim/rng.h"
#include "workload/options.h"

#include <fmt/format.h>

#include <algorithm>

namespace schedlab {

namespace {
const char* const where_make = "make";
constexpr sim_dur make_parse = msecs(150);   ///< make reading the Makefiles before the first job
constexpr sim_dur make_per_job = usecs(150); ///< make's rule evaluation and stat()s per job
constexpr sim_dur gcc_driver = msecs(2);     ///< the gcc driver's own user time per compile

bool all_digits(const std::string& s)
{
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

unsigned job_count(const std::string& v, const std::string& shown)
{
    return static_cast<unsigned>(parse_integer(v, shown, where_make, 1, 100'000));
}
} // namespace

kbuild_params parse_kbuild_options(const std::vector<std::string>& args)
{
    kbuild_params kp;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&](const std::string& opt) -> std::string {
            if (i + 1 >= args.size())
                throw config_error(where_make, fmt::format("option '{}' requires a value", opt));
            return args[++i];
        };
        if (a == "-j" || a == "--jobs") {
            // GNU make: -j takes an optional number; without one, no limit.
            if (i + 1 < args.size() && all_digits(args[i + 1]))
                kp.jobs = job_count(args[++i], a);
            else
                kp.jobs = 0;
        } else if (a.rfind("--jobs=", 0) == 0) {
            kp.jobs = job_count(a.substr(7), "--jobs");
        } else if (a.rfind("-j", 0) == 0 && a.size() > 2) {
            kp.jobs = job_count(a.substr(2), "-j");
        } else if (a == "-s" || a == "--silent" || a == "--quiet") {
            continue; // output only
        } else if (a == "-C") {
            (void)value(a); // the tree's directory: the model has one tree
        } else if (a == "--objects") {
            kp.objects = static_cast<unsigned>(parse_integer(value(a), a, where_make, 1, 1'000'000));
        } else if (a == "--dirs") {
            kp.dirs = static_cast<unsigned>(parse_integer(value(a), a, where_make, 1, 100'000));
        } else if (a == "--compile-ms") {
            kp.compile_mean =
                msecs(parse_integer(value(a), a, where_make, 1, 3'600'000));
        } else if (!a.empty() && a[0] == '-') {
            throw config_error(where_make,
                               fmt::format("option '{}' is not modelled (accepted: -j [N], "
                                           "--jobs[=N], -s, -C DIR, --objects N, --dirs N, "
                                           "--compile-ms MS)",
                                           a));
        } else if (a.find('=') != std::string::npos) {
            throw config_error(where_make,
                               fmt::format("variable assignment '{}' is not modelled", a));
        } else {
            kp.targets.push_back(a);
        }
    }
    if (kp.dirs > kp.objects)
        kp.dirs = kp.objects;
    return kp;
}

/*
 * model: a defconfig-like tree: objects spread over directories (drawn from
 * a fixed stream), cc1 CPU times 20 ms + exponential(mean - 20 ms), capped
 * at 10 s; one archive (ar) per directory; the link tail of kbuild's
 * link-vmlinux.sh: vmlinux.o, modpost, two kallsyms passes, the final link
 * (5.6 s in all for the default tree, scaled with the tree's compile work).
 */
std::vector<kbuild_job> kbuild_dag(const kbuild_params& kp)
{
    rng_stream r(0, fmt::format("kbuild/tree/{}/{}/{}", kp.objects, kp.dirs, kp.compile_mean));
    std::vector<kbuild_job> dag;
    dag.reserve(kp.objects + kp.dirs + 5);
    const sim_dur floor = std::min<sim_dur>(msecs(20), kp.compile_mean / 2);
    for (unsigned o = 0; o < kp.objects; ++o) {
        const unsigned dir = o < kp.dirs ? o : static_cast<unsigned>(r.below(kp.dirs));
        const sim_dur t = std::min<sim_dur>(secs(10), floor + r.exponential(kp.compile_mean - floor));
        dag.push_back({kbuild_job::compile, dir, t, fmt::format("dir{}/file{}.o", dir, o)});
    }
    // Directory order for make: all compiles by directory, then archives.
    std::stable_sort(dag.begin(), dag.end(),
                     [](const kbuild_job& a, const kbuild_job& b) { return a.dir < b.dir; });
    for (unsigned d = 0; d < kp.dirs; ++d)
        dag.push_back({kbuild_job::archive, d, msecs(5), fmt::format("dir{}/built-in.a", d)});
    const struct {
        const char* name;
        sim_dur cpu;
    } tail[] = {{"vmlinux.o", msecs(2500)},
                {"modpost", msecs(400)},
                {".tmp_vmlinux.kallsyms1", msecs(900)},
                {".tmp_vmlinux.kallsyms2", msecs(900)},
                {"vmlinux", msecs(900)}};
    // The link work grows with the tree: the figures above are for the default tree.
    const double scale = static_cast<double>(kp.objects) * static_cast<double>(kp.compile_mean) /
                         (2400.0 * static_cast<double>(msecs(600)));
    for (const auto& t : tail)
        dag.push_back({kbuild_job::link, 0,
                       std::max<sim_dur>(usecs(100), static_cast<sim_dur>(static_cast<double>(t.cpu) * scale)),
                       t.name});
    return dag;
}

std::string kbuild_workload::command_line() const
{
    std::string s = kp_.jobs ? fmt::format("make -j {}", kp_.jobs) : std::string("make -j");
    s += fmt::format(" --objects {} --dirs {} --compile-ms {}", kp_.objects, kp_.dirs,
                     kp_.compile_mean / NSEC_PER_MSEC);
    for (const std::string& t : kp_.targets)
        s += " " + t;
    return s;
}

/*
 * model: /usr/bin/time make -j N, task by task:
 * - time (on CPU 0): fork()s and exec()s make, wait()s for it, reads the
 *   children's rusage and prints;
 * - make: reads its Makefiles, then starts the jobs in DAG order, each once
 *   its prerequisites have exited (a directory's archive after its
 *   objects, the first link step after every archive, each link step after
 *   the previous one) and fewer than N of its children run (wait() for any
 *   child otherwise, as make does on SIGCHLD); then reaps the rest;
 * - a compile job (sh -c "gcc ..."): exec()s gcc, whose driver fork()s and
 *   exec()s cc1 (the compile's CPU time) and then as (a tenth of it),
 *   wait()ing for each; an archive or link job exec()s its tool and runs.
 * User time is the CPU of the user-space parts (make, gcc, cc1, as, ar,
 * ld); system time is the rest of the build tasks' CPU (fork, exec, exit,
 * wait, context switches).
 */
void kbuild_workload::setup(syscalls& sys)
{
    dag_ = kbuild_dag(kp_);
    const std::size_t n = dag_.size();
    times_.assign(n, {-1, -1});
    chld_ = &state_.make_counter("make/wait_chldexit", WF_SYNC);
    archives_ = &state_.make_counter("make/archives", WF_SYNC);
    links_ = &state_.make_counter("make/links", WF_SYNC);
    dir_done_.clear();
    dir_objs_.assign(kp_.dirs, 0);
    for (unsigned d = 0; d < kp_.dirs; ++d)
        dir_done_.push_back(&state_.make_counter(fmt::format("make/dir{}", d), WF_SYNC));
    job_chld_.assign(n, nullptr);
    for (std::size_t i = 0; i < n; ++i) {
        if (dag_[i].kind != kbuild_job::compile)
            continue;
        ++dir_objs_[dag_[i].dir];
        job_chld_[i] = &state_.make_counter(fmt::format("job{}/chld", i), WF_SYNC);
    }
    make_exit_ = &state_.make_counter("time/wait_chldexit", WF_SYNC);

    task_opts o;
    o.comm = "time";
    o.cpu = 0;
    sys.spawn(make_task([this](task_context& t) { return run_time(t); }), o);
}

task_code kbuild_workload::run_time(task_context& t)
{
    start_ = t.now();
    time_pid_ = t.task().pid;
    const fork_opts make{.comm = "make", .thread = false, .notify = make_exit_};
    co_await t.fork([this](task_context& c) { return run_make(c); }, make);
    co_await t.wait_for(*make_exit_, 1, &cost_params::wait_child);
    end_ = t.now();
    // getrusage(RUSAGE_CHILDREN): every build task's CPU; the user part is what we ran as user.
    const sim_dur total = t.sys().rusage_children(t.task());
    system_ = std::max<sim_dur>(0, total - user_);
    finished_ = true;
}

task_code kbuild_workload::run_make(task_context& t)
{
    co_await t.exec();
    co_await user_cpu(t, make_parse);
    unsigned link_idx = 0;
    for (std::size_t i = 0; i < dag_.size(); ++i) {
        const kbuild_job& j = dag_[i];
        // Prerequisites.
        if (j.kind == kbuild_job::archive)
            co_await t.wait_for(*dir_done_[j.dir], dir_objs_[j.dir], &cost_params::wait_child);
        if (j.kind == kbuild_job::link) {
            co_await t.wait_for(*archives_, kp_.dirs, &cost_params::wait_child);
            co_await t.wait_for(*links_, link_idx, &cost_params::wait_child);
            ++link_idx;
        }
        // A free job slot: at most N children running.
        if (kp_.jobs > 0 && i >= kp_.jobs)
            co_await t.wait_for(*chld_, i - kp_.jobs + 1, &cost_params::wait_child);
        co_await user_cpu(t, make_per_job);
        const fork_opts job{.comm = j.kind == kbuild_job::compile   ? "gcc"
                                    : j.kind == kbuild_job::archive ? "ar"
                                                                    : "ld",
                            .thread = false,
                            .notify = chld_};
        co_await t.fork([this, i](task_context& c) { return run_job(c, i); }, job);
    }
    co_await t.wait_for(*chld_, dag_.size(), &cost_params::wait_child);
}

task_code kbuild_workload::run_job(task_context& t, std::size_t i)
{
    const kbuild_job& j = dag_[i];
    times_[i].first = t.now();
    max_running_ = std::max(max_running_, ++running_);
    co_await t.exec();
    if (j.kind == kbuild_job::compile) {
        counter& sub = *job_chld_[i];
        const fork_opts cc1{.comm = "cc1", .thread = false, .notify = &sub};
        const fork_opts as{.comm = "as", .thread = false, .notify = &sub};
        co_await user_cpu(t, gcc_driver);
        co_await t.fork([this, &j](task_context& c) { return run_tool(c, j.cpu); }, cc1);
        co_await t.wait_for(sub, 1, &cost_params::wait_child);
        co_await t.fork([this, &j](task_context& c) { return run_tool(c, j.cpu / 10); }, as);
        co_await t.wait_for(sub, 2, &cost_params::wait_child);
    } else {
        co_await user_cpu(t, j.cpu);
    }
    times_[i].second = t.now();
    --running_;
    if (j.kind == kbuild_job::compile)
        co_await t.signal(*dir_done_[j.dir]);
    else if (j.kind == kbuild_job::archive)
        co_await t.signal(*archives_);
    else
        co_await t.signal(*links_);
}

// cc1, as: exec() the tool, run its user-space CPU.
task_code kbuild_workload::run_tool(task_context& t, sim_dur cpu)
{
    co_await t.exec();
    co_await user_cpu(t, cpu);
}

std::string kbuild_workload::report() const
{
    if (!finished_)
        return "# schedlab: not finished when the run stopped\n";
    // GNU time's default format.
    const double e = static_cast<double>(elapsed()) / 1e9;
    const double u = static_cast<double>(user_) / 1e9;
    const double s = static_cast<double>(system_) / 1e9;
    std::string el;
    const long whole = static_cast<long>(e);
    if (whole >= 3600)
        el = fmt::format("{}:{:02}:{:02}", whole / 3600, (whole % 3600) / 60, whole % 60);
    else
        el = fmt::format("{}:{:05.2f}", whole / 60, e - static_cast<double>(whole / 60 * 60));
    const long pct = e > 0 ? static_cast<long>((u + s) / e * 100.0) : 0;
    std::string out = fmt::format("{:.2f}user {:.2f}system {}elapsed {}%CPU (0avgtext+0avgdata "
                                  "0maxresident)k\n",
                                  u, s, el, pct);
    out += "0inputs+0outputs (0major+0minor)pagefaults 0swaps\n";
    out += fmt::format("# schedlab: {} jobs ({} compiles, {} archives, {} link steps), at most {} "
                       "running at once\n",
                       dag_.size(), kp_.objects, kp_.dirs, dag_.size() - kp_.objects - kp_.dirs,
                       max_running_);
    return out;
}

std::vector<workload_metric> kbuild_workload::metrics() const
{
    if (!finished_)
        return {};
    return {{"elapsed", "s", static_cast<double>(elapsed()) / 1e9, false},
            {"user", "s", static_cast<double>(user_) / 1e9, false},
            {"system", "s", static_cast<double>(system_) / 1e9, false}};
}

std::unique_ptr<workload> make_kbuild_workload(const std::vector<std::string>& args)
{
    return std::make_unique<kbuild_workload>(parse_kbuild_options(args));
}

} // namespace schedlab
