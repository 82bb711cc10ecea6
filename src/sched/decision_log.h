// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The decision log (`schedlab run --explain`): the scheduler's decisions,
 * each with the branch taken and why, handed to a sink as they are made.
 * model: the kernel has no such log (the closest are the sched tracepoints
 * and schedstats); it is the model's own explanation of itself. One per
 * run, in the run_context the kernel is handed (run_context.h; the kernel
 * reaches it through kernel::decisions()); off, and costing one pointer test
 * per decision, unless a sink is set.
 *
 * It also keeps the branch the last select_task_rq_fair() and
 * select_idle_sibling() took, which the "select_task_rq" entry prints and
 * tests read.
 */
#include "sim/time.h"

#include <string>

namespace schedlab {

/// One explained decision, when the decision log is on (decision_log::set_sink).
struct sched_decision {
    sim_time ts;
    int cpu;          ///< the CPU deciding
    std::string what; ///< "select_task_rq", "load_balance", ...
    std::string text; ///< the branch taken and why
};

/// Where the decision log goes: each decision as it is made.
class decision_sink {
public:
    virtual ~decision_sink() = default;
    virtual void decision(const sched_decision& d) = 0;
};

class decision_log {
public:
    void set_sink(decision_sink* sink) { sink_ = sink; }
    /// A sink is set: callers format a decision's text only then.
    bool on() const { return sink_ != nullptr; }
    /// Hands one decision to the sink, if any.
    void log(sim_time ts, int cpu, const char* what, std::string text);

    /* ---- the branches of the last placement ---- */

    /// select_task_rq_fair() starts: both branches forgotten, `branch` its first.
    void select_begin(const char* branch)
    {
        select_branch_ = branch;
        sis_branch_ = nullptr;
    }
    void select_branch(const char* branch) { select_branch_ = branch; }
    void sis_branch(const char* branch) { sis_branch_ = branch; }
    const char* last_select_branch() const { return select_branch_; }
    const char* last_sis_branch() const { return sis_branch_; }
    /// "<branch>[; select_idle_sibling: <branch>]", as the select_task_rq entry prints it.
    std::string last_placement() const;

private:
    decision_sink* sink_ = nullptr;
    const char* select_branch_ = nullptr;
    const char* sis_branch_ = nullptr;
};

} // namespace schedlab
