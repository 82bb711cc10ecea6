// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * A kernel build, `make -j N` timed by /usr/bin/time (mmtests kernbench;
 * docs/workloads.md): a DAG of short-lived compile jobs, each a fork/exec
 * of gcc which forks and execs cc1 then as, limited to N at a time by make;
 * per directory an archive step once its objects are built; then a serial
 * link tail (vmlinux.o, modpost, two kallsyms links, the final link).
 * Prints /usr/bin/time's default two lines (elapsed, user, system).
 *
 * The tree is a model, not a real kernel: --objects compile jobs in --dirs
 * directories, compile CPU times drawn once from a fixed stream (the same
 * for every seed: a source tree does not change between runs) with mean
 * --compile-ms. Defaults are of the order of an x86 defconfig (2400
 * objects, ~0.6 s of cc1 each).
 *
 * Not modelled: make's jobserver pipe (the limit is enforced by one make),
 * recursion into sub-makes and their own CPU, Kconfig, header dependency
 * stat()s beyond a fixed CPU cost per job, the page cache and disk I/O, the
 * memory figures of /usr/bin/time (printed as 0).
 */
#include "workload/program.h"
#include "workload/workload.h"

#include <memory>
#include <string>
#include <vector>

namespace schedlab {

struct task_struct;

struct kbuild_params {
    unsigned jobs = 1;         ///< -j N; 0 = -j without a number (unlimited)
    unsigned objects = 2400;   ///< --objects (schedlab only)
    unsigned dirs = 40;        ///< --dirs (schedlab only)
    sim_dur compile_mean = msecs(600); ///< --compile-ms (schedlab only): mean cc1 CPU time
    std::vector<std::string> targets; ///< make's targets (all modelled alike)
};

kbuild_params parse_kbuild_options(const std::vector<std::string>& args);

/// One job of the build DAG, in make's start order.
struct kbuild_job {
    enum kind_t : u8 { compile, archive, link } kind;
    unsigned dir = 0;      ///< compile/archive: its directory
    sim_dur cpu = 0;       ///< compile: cc1's CPU time; archive/link: the tool's CPU time
    std::string name;      ///< e.g. "kernel/fork.o" style label, "built-in.a", "vmlinux.o"
};

/// The modelled tree: compiles of every directory, archives, then the link tail.
std::vector<kbuild_job> kbuild_dag(const kbuild_params& kp);

class kbuild_workload final : public workload {
public:
    explicit kbuild_workload(kbuild_params kp) : kp_(std::move(kp)) {}

    std::string name() const override { return "kbuild"; }
    std::string command_line() const override;
    void setup(syscalls& sys) override;
    bool finished() const override { return finished_; }
    std::string report() const override;
    std::vector<workload_metric> metrics() const override;

    const std::vector<kbuild_job>& dag() const { return dag_; }
    /// Start and end times of each job (its first process), once run.
    const std::vector<std::pair<sim_time, sim_time>>& job_times() const { return times_; }
    sim_dur elapsed() const { return end_ - start_; }
    sim_dur user_time() const { return user_; }
    sim_dur system_time() const { return system_; }
    /// Most jobs running at once.
    unsigned max_running() const { return max_running_; }

private:
    task_code run_time(task_context& t);
    task_code run_make(task_context& t);
    task_code run_job(task_context& t, std::size_t i);
    task_code run_tool(task_context& t, sim_dur cpu);
    /// User-space CPU of a build tool (counted as user time).
    call_awaiter<calls::run> user_cpu(task_context& t, sim_dur ns)
    {
        user_ += ns;
        return t.run(ns);
    }

    kbuild_params kp_;
    workload_state state_;
    std::vector<kbuild_job> dag_;
    std::vector<std::pair<sim_time, sim_time>> times_;
    counter* chld_ = nullptr;        ///< make's wait_chldexit
    counter* archives_ = nullptr;    ///< archives done
    counter* links_ = nullptr;       ///< link steps done
    counter* make_exit_ = nullptr;   ///< time's wait_chldexit
    std::vector<counter*> dir_done_; ///< per directory: its objects compiled
    std::vector<u64> dir_objs_;      ///< per directory: its objects
    std::vector<counter*> job_chld_; ///< per compile job: the gcc driver's wait_chldexit
    unsigned running_ = 0;
    unsigned max_running_ = 0;
    sim_time start_ = 0;
    sim_time end_ = 0;
    sim_dur user_ = 0;
    sim_dur system_ = 0;
    int time_pid_ = 0;
    bool finished_ = false;
};

std::unique_ptr<workload> make_kbuild_workload(const std::vector<std::string>& args);

} // namespace schedlab
