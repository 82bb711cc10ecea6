// SPDX-License-Identifier: GPL-2.0-only
/*
 * State dumps in the spirit of /proc/sched_debug (kernel/sched/debug.c
 * print_cfs_rq() / print_rq()), printed by every failed invariant check.
 */
#include "sched/core.h"
#include "sim/bug.h"

#include <fmt/format.h>

namespace schedlab {

// kernel: kernel/sched/debug.c print_cpu() + print_cfs_rq() + print_rq(), 6.6 fields, own layout.
std::string kernel::print_rq(int cpu) const
{
    const rq& r = cpu_rq(cpu);
    std::string s = fmt::format(
        "cpu#{}\n  .nr_running : {}\n  .nr_switches : {}\n  .curr->pid : {} ({})\n"
        "  .clock : {}\n  .need_resched : {}\n  .avg_idle : {}\n",
        cpu, r.nr_running, r.nr_switches, r.curr->pid, r.curr->comm, r.clock, r.need_resched,
        r.avg_idle);
    auto print_cfs = [&](const cfs_rq& cfs, const std::string& path) {
        s += fmt::format("cfs_rq[{}]:{}\n  .nr_running : {}\n  .h_nr_running : {}\n  .load : {}\n"
                         "  .min_vruntime : {}\n",
                         cpu, path, cfs.nr_running, cfs.h_nr_running, cfs.load.weight,
                         static_cast<s64>(cfs.min_vruntime));
        if (policy_->print_cfs_rq)
            policy_->print_cfs_rq(*this, cfs, s);
        s += "runnable tasks:\n   S  task   PID   vruntime   deadline   vlag   slice   "
             "sum-exec   switches  eligible\n";
        auto line = [&](const sched_entity& se, char state) {
            const task_struct& p = *se.owner;
            s += fmt::format(" {} {:>6} {:>5} {:>12} {:>12} {:>8} {:>8} {:>12} {:>8} {}\n", state,
                             p.comm, p.pid, static_cast<s64>(se.vruntime),
                             static_cast<s64>(se.deadline), se.vlag, se.slice, se.sum_exec_runtime,
                             p.nvcsw + p.nivcsw, policy_->eligible(*this, cfs, se));
        };
        if (cfs.curr)
            line(*cfs.curr, '>');
        for (const sched_entity* se : cfs.tasks_timeline)
            line(*se, ' ');
    };
    // One autogroup (every run but those with a session of their own): its cfs_rq as "/",
    // as before the hierarchy; more: each group's, and the root's group entities.
    if (task_groups_.size() <= 1) {
        print_cfs(r.cfs, "/");
    } else {
        const cfs_rq& root = r.root_cfs;
        s += fmt::format("cfs_rq[{}]:/\n  .nr_running : {}\n  .h_nr_running : {}\n  .load : {}\n"
                         "  .min_vruntime : {}\n",
                         cpu, root.nr_running, root.h_nr_running, root.load.weight,
                         static_cast<s64>(root.min_vruntime));
        for (const task_group* tg : task_groups_) {
            const tg_sched_entity& gse = *tg->se_[static_cast<std::size_t>(cpu)];
            s += fmt::format("  se /{}: on_rq {} curr {} weight {} vruntime {} deadline {} vlag {}\n",
                             tg->name, gse.se.on_rq, root.curr == &gse.se, gse.se.load.weight,
                             static_cast<s64>(gse.se.vruntime), static_cast<s64>(gse.se.deadline),
                             gse.se.vlag);
        }
        for (const task_group* tg : task_groups_)
            print_cfs(*tg->cfs_rq_[static_cast<std::size_t>(cpu)], "/" + tg->name);
    }
    if (scx_) { // kernel: ext.c's sched_debug lines (print_scx_info / scx_rq), own layout
        s += fmt::format("scx_rq[{}]:\n  .nr_running : {}\n  .local_dsq.nr : {}\n  .runnable : {}\n",
                         cpu, r.scx.nr_running, r.scx.local_dsq.nr, r.scx.runnable_list.size());
        for (const task_struct* p : r.scx.runnable_list)
            s += fmt::format("   {:>6} {:>5} slice {:>9} dsq_vtime {:>12} dsq {:#x} runnable_at {}\n",
                             p->comm, p->pid, p->scx.view.slice, p->scx.view.dsq_vtime,
                             p->scx.dsq ? p->scx.dsq->id : 0, p->scx.runnable_at);
    }
    return s;
}

std::string kernel::dump_state() const
{
    std::string s = fmt::format("schedlab state at t={} ns, seed {}, kernel {} ({}), machine {}\n",
                                sim_.now(), sim_.seed(), kc_.spec,
                                policy_->name, m_.name);
    s += fmt::format("features: {}\n", kc_.features_string());
    for (int cpu = 0; cpu < nr_cpu_ids(); ++cpu) {
        const rq& r = cpu_rq(cpu);
        if (r.nr_running == 0 && r.curr->is_idle_task() && nr_cpu_ids() > 16)
            continue; // keep dumps of big machines readable: skip idle CPUs
        s += print_rq(cpu);
    }
    return s;
}

/*
 * kernel: kernel/sched/debug.c sched_feat_write() -> sched_feat_set(), 6.6:
 * a write to /sys/kernel/debug/sched/features switches one bit; the patch
 * sets that react to a switch (SHARED_RUNQ drains its queues) see it.
 */
void kernel::sched_feat_set(sched_feat_id f, bool on)
{
    SIM_BUG_ON(!kc_.has_feature(f), "feature {} does not exist in kernel {}",
               sched_feat_table()[f].name, kc_.base);
    const bool was = kc_.features.test(f);
    kc_.features.set(f, on);
    for (const auto hook : patches_.feat_set)
        hook(*this, f, was, on);
}

} // namespace schedlab
