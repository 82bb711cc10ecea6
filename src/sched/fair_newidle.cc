// SPDX-License-Identifier: GPL-2.0-only
/*
 * The newly-idle balance's two versions (newidle_ops, fair_balance.h): 5.15's and
 * the one Vincent Guittot's series made in v5.16, which every later profile has.
 * sched_balance_newidle() and sched_balance_domains() (fair_balance.cc) are the
 * mechanism and call these where the versions differ.
 */
#include "sched/core.h"
#include "sched/fair.h"
#include "sched/fair_balance.h"

namespace schedlab {

namespace {

/*
 * kernel: kernel/sched/fair.c newidle_balance(), v5.15: no balancing while avg_idle
 * is below sysctl_sched_migration_cost or the root domain is not overloaded. The
 * patch sets' newidle_overloaded hooks are not called (the one patch set with one,
 * SHARED_RUNQ v4, was posted on tip-2023-12: posted_base(), profiles.cc).
 */
newidle_gate gate_5_15(kernel& k, rq& this_rq, const sched_domain* /*gate_sd*/)
{
    if (this_rq.avg_idle < k.tunables().migration_cost || !k.rd().overload)
        return newidle_gate::closed;
    return newidle_gate::open;
}

/*
 * kernel: kernel/sched/fair.c newidle_balance(), v5.16-6.6 (c5b0a7eefc70,
 * 9d783c8dd112): no balancing unless the root domain is overloaded, then (after the
 * patch sets' pulls: SHARED_RUNQ v4) none while avg_idle is below the gate domain's
 * max_newidle_lb_cost.
 */
newidle_gate gate_5_16(kernel& k, rq& this_rq, const sched_domain* gate_sd)
{
    if (!k.rd().overload)
        return newidle_gate::closed;
    for (const auto hook : k.patches().newidle_overloaded) { // SHARED_RUNQ v4: pull here
        const int pulled = hook(k, this_rq);
        if (pulled < 0)
            return newidle_gate::abort;
        if (pulled > 0)
            return newidle_gate::pulled;
    }
    if (gate_sd && this_rq.avg_idle < gate_sd->max_newidle_lb_cost)
        return newidle_gate::closed;
    return newidle_gate::open;
}

// kernel: kernel/sched/fair.c newidle_balance(), v5.15: a domain's maximum only grows here.
void record_cost_5_15(kernel& /*k*/, sched_domain& sd, u64 cost)
{
    if (cost > sd.max_newidle_lb_cost)
        sd.max_newidle_lb_cost = cost;
}

// kernel: kernel/sched/fair.c newidle_balance(), v5.16 on (e60b56e46b38): update_newidle_cost().
void record_cost_5_16(kernel& k, sched_domain& sd, u64 cost)
{
    update_newidle_cost(k, sd, cost);
}

/*
 * kernel: kernel/sched/fair.c rebalance_domains(), v5.15: each domain's maximum
 * decays by 253/256 once its next_decay_max_lb_cost (last_decay_max_lb_cost here)
 * has passed, the next due a second later; any decay has the rq's maximum
 * recomputed.
 */
void decay_5_15(kernel& k, sched_domain& sd, bool& need_decay)
{
    if (jiffies(k) > sd.last_decay_max_lb_cost) {
        sd.max_newidle_lb_cost = sd.max_newidle_lb_cost * 253 / 256;
        sd.last_decay_max_lb_cost = jiffies(k) + k.config().params.hz; // next_decay_max_lb_cost
        need_decay = true;
    }
}

/*
 * kernel: kernel/sched/fair.c rebalance_domains(), v5.16 on (e60b56e46b38):
 * update_newidle_cost(sd, 0); need_decay is the last domain's.
 */
void decay_5_16(kernel& k, sched_domain& sd, bool& need_decay)
{
    need_decay = update_newidle_cost(k, sd, 0);
}

} // namespace

const newidle_ops newidle_5_15_ops = {
    .name = "5.15",
    .gate = gate_5_15,
    .blocked_averages_in_cost = false,
    .next_balance_before_balancing = false,
    .record_cost = record_cost_5_15,
    .decay = decay_5_15,
};

const newidle_ops newidle_5_16_ops = {
    .name = "5.16",
    .gate = gate_5_16,
    .blocked_averages_in_cost = true,      // 9e9af819db5d
    .next_balance_before_balancing = true, // 8ea9183db4ad
    .record_cost = record_cost_5_16,
    .decay = decay_5_16,
};

} // namespace schedlab
