// SPDX-License-Identifier: GPL-2.0-only
/* The cost model's prices applied to CPUs (cpu_charges.h). */
#include "sched/cpu_charges.h"

#include "sim/bug.h"

#include <algorithm>

namespace schedlab {

cpu_charges::cpu_charges(simulation& sim, const machine& m, const cost_params& p)
    : sim_(sim), cm_(m, p), cpus_(static_cast<std::size_t>(m.nr_cpus()))
{
    /*
     * model: a CPU idle since the run began has been idle "forever" as far as its
     * governor knows, so it sits in the state the governor picks for that, the deep one
     * where the machine has it, as a real CPU idle since boot does. Its first wakeup pays
     * that state's exit, and find_idlest_group_cpu() ranks it by that state's exit
     * latency. Its menu history is eight such idles, each ended by a timer as far off as
     * menu sees with nothing queued (the 4 s of cpuidle_enter()'s no_timer), with unity
     * correction factors; that first period itself is not learnt (no selection made it).
     */
    for (cpu_charge_state& st : cpus_) {
        st.idle.state = cm_.idle_select(secs(4));
        st.idle.menu.intervals.fill(4'000'000);
    }
}

void cpu_charges::attach(const std::vector<std::unique_ptr<rq>>& rqs)
{
    SIM_BUG_ON(rqs_ != nullptr, "cpu_charges attached to a second kernel (one run_context each)");
    SIM_BUG_ON(rqs.size() != cpus_.size(), "cpu_charges of {} CPUs attached to {} runqueues",
               cpus_.size(), rqs.size());
    rqs_ = &rqs;
}

void cpu_charges::charge_cpu(rq& r, sim_dur ns, acct_cat category)
{
    if (ns <= 0)
        return;
    cpu_charge_state& st = state(r);
    st.charged_ns += static_cast<u64>(ns);
    if (r.curr->is_idle_task()) {
        st.acct.idle_work[category] += ns;
        st.idle_busy_until = std::max(st.idle_busy_until, sim_.now()) + ns;
    } else if (sim_.pending(r.work_event)) {
        // Interrupts the running task's burst: it resumes after the charge.
        end_segment(r);
        st.pending[category] += ns;
        sim_.reschedule(r.work_event, sim_.now() + begin_segment(r));
    } else {
        st.pending[category] += ns;
    }
}

/*
 * kernel: include/trace/events/sched.h's tracepoints, written by trace_event_buffer_reserve()
 * and trace_event_buffer_commit() (kernel/trace/trace_events.c) into the emitting CPU's ring
 * buffer, with the CPU's own time: the write is in the path that emits it, before what
 * follows it there. model: one cost per event, whatever its fields (sched_switch's are the
 * most); the writes of one CPU follow each other (tracepoint_until).
 */
void cpu_charges::charge_tracepoint_write(rq& r)
{
    const sim_dur c = cm_.params().sched_tracepoint;
    charge_cpu(r, c, ACCT_TRACEPOINT);
    cpu_charge_state& st = state(r);
    st.tracepoint_until = std::max(st.tracepoint_until, sim_.now()) + c;
}

template <typename Charge>
void cpu_charges::lock_and_charge_with(contended_lock& l, int cpu, sim_dur hold, Charge charge)
{
    const auto [spin, held] = cm_.lock_acquire(l, cpu, hold, sim_.now());
    rq& r = *(*rqs_)[static_cast<std::size_t>(cpu)];
    (this->*charge)(r, spin, ACCT_LOCK_SPIN);
    (this->*charge)(r, held, ACCT_LOCK_HOLD);
}

void cpu_charges::lock_and_charge(contended_lock& l, int cpu, sim_dur hold)
{
    lock_and_charge_with(l, cpu, hold, &cpu_charges::charge_cpu);
}

void cpu_charges::lock_line_and_charge(contended_lock& l, int cpu, sim_dur hold)
{
    lock_and_charge_with(l, cpu, hold, &cpu_charges::charge_line);
}

void cpu_charges::lock_shard_and_charge(contended_lock& l, int cpu, sim_dur hold)
{
    lock_and_charge_with(l, cpu, hold, &cpu_charges::charge_shard);
}

sim_dur cpu_charges::hold_longer(contended_lock& l, int cpu, sim_dur ns)
{
    if (l.last_cpu != cpu || ns <= 0)
        return 0;
    l.busy_until = std::max(l.busy_until, sim_.now()) + ns;
    return ns;
}

void cpu_charges::hold_across_lines(contended_lock& l, int cpu, u64 line_ns_before)
{
    const u64 line = cpus_[static_cast<std::size_t>(cpu)].line_ns;
    if (line > line_ns_before)
        hold_longer(l, cpu, static_cast<sim_dur>(line - line_ns_before));
}

void cpu_charges::hold_across_send(contended_lock& l, int cpu, u64 ipi_send_ns_before)
{
    const u64 sent = cpus_[static_cast<std::size_t>(cpu)].ipi_send_ns;
    if (sent > ipi_send_ns_before)
        hold_longer(l, cpu, static_cast<sim_dur>(sent - ipi_send_ns_before));
}

sim_dur cpu_charges::hold_across_shard(contended_lock& l, int cpu, u64 shard_ns_before)
{
    const u64 shard = cpus_[static_cast<std::size_t>(cpu)].shard_ns;
    return shard > shard_ns_before
               ? hold_longer(l, cpu, static_cast<sim_dur>(shard - shard_ns_before))
               : 0;
}

void cpu_charges::pull_rq_lines(rq& r, int waker_cpu)
{
    if (r.cpu == waker_cpu)
        return;
    cm_.count_remote_activation();
    charge_cpu(*(*rqs_)[static_cast<std::size_t>(waker_cpu)],
               cm_.params().wakeup_remote_lines * cm_.line_cost(r.cpu, waker_cpu), ACCT_LOCK_HOLD);
}

sim_dur cpu_charges::remote_notify_delay(rq& r, int sender_cpu, cost_model::notify by)
{
    cpu_charge_state& st = state(r);
    /*
     * kernel: kernel/sched/idle.c do_idle() and kernel/sched/core.c
     * send_call_function_single_ipi(), resched_curr() (6.18): the idle task's
     * TIF_POLLING_NRFLAG is clear while it is not running and is set only when do_idle()
     * starts, so a wake-list or reschedule IPI to a CPU still in __schedule() to idle
     * (rq::in_schedule) finds set_nr_if_polling() / set_nr_and_not_polling() false and
     * is sent, whether or not the idle states poll; that CPU has entered no C-state and
     * takes the IPI as a running CPU does (ipi_wakeup, ipi_send), with no idle exit and
     * no idle period for the governor (do_idle() skips its loop on need_resched).
     */
    const bool cpu_idle = r.curr->is_idle_task() && !(by == cost_model::notify::ipi && r.in_schedule);
    SIM_BUG_ON(!cpu_idle && by == cost_model::notify::timer,
               "cpu{} notified by its own timer while running pid {}", r.cpu, r.curr->pid);
    const cost_model::notify_cost c = cm_.remote_notify(st.idle, cpu_idle, by, sim_.now());
    st.acct.idle_exit += c.idle_exit;
    if (cpu_idle) {
        st.do_idle_exit_owed = true;
        st.by_own_timer |= by == cost_model::notify::timer;
    }
    charge_cpu(*(*rqs_)[static_cast<std::size_t>(sender_cpu)], c.sender, ACCT_IPI);
    if (c.sender > 0)
        cpus_[static_cast<std::size_t>(sender_cpu)].ipi_send_ns += static_cast<u64>(c.sender);
    return c.delay;
}

sim_time cpu_charges::owed_until(const rq& r) const
{
    const cpu_charge_state& st = state(r);
    const sim_time now = sim_.now();
    if (r.curr->is_idle_task())
        return std::max(now, st.idle_busy_until);
    if (sim_.pending(r.work_event))
        return std::max(now, st.seg_start + st.seg_overhead);
    sim_dur owed = 0;
    for (const sim_dur ns : st.pending)
        owed += ns;
    return now + owed;
}

cpu_time_accounting cpu_charges::cpu_accounting(const rq& r) const
{
    const cpu_charge_state& st = state(r);
    cpu_time_accounting a = st.acct;
    if (!r.curr->is_idle_task() && sim_.pending(r.work_event)) {
        sim_dur budget = sim_.now() - st.seg_start;
        for (int c = 0; c < ACCT_NR; ++c) {
            const sim_dur used = std::min(budget, st.seg_cat[c]);
            a.spent[c] += used;
            budget -= used;
        }
        a.task += budget;
    }
    return a;
}

sim_dur cpu_charges::begin_segment(rq& r)
{
    const task_struct& p = *r.curr;
    const sim_time now = sim_.now();
    cpu_charge_state& st = state(r);
    if (st.idle_busy_until > now) {
        // Kernel work begun while idle is not finished: the task waits for it.
        const sim_dur carried = st.idle_busy_until - now;
        st.pending[ACCT_CARRIED] += carried;
        st.acct.carried += carried; // part of idle_work that turns out to be busy time
    }
    st.idle_busy_until = 0;
    sim_dur overhead = 0;
    for (int c = 0; c < ACCT_NR; ++c) {
        st.seg_cat[c] = st.pending[c];
        overhead += st.pending[c];
        st.pending[c] = 0;
    }
    st.seg_start = now;
    st.seg_overhead = overhead;
    st.seg_rate_pct = cm_.smt_rate_pct(r.cpu, !p.is_idle_task());
    const sim_dur work_time = (p.work_left * 100 + st.seg_rate_pct - 1) / st.seg_rate_pct;
    return overhead + work_time;
}

void cpu_charges::end_segment(rq& r)
{
    task_struct& p = *r.curr;
    cpu_charge_state& st = state(r);
    const sim_dur elapsed = sim_.now() - st.seg_start;
    // The overhead is spent first, category by category; what is left stays owed.
    sim_dur budget = elapsed;
    for (int c = 0; c < ACCT_NR; ++c) {
        const sim_dur used = std::min(budget, st.seg_cat[c]);
        st.acct.spent[c] += used;
        st.pending[c] += st.seg_cat[c] - used;
        st.seg_cat[c] = 0;
        budget -= used;
    }
    const sim_dur useful = budget;
    const sim_dur progress = useful * st.seg_rate_pct / 100;
    p.work_left -= std::min(progress, p.work_left);
    st.busy_time += elapsed;
    st.acct.task += useful;
}

void cpu_charges::burst_done(rq& r)
{
    cpu_charge_state& st = state(r);
    st.busy_time += sim_.now() - st.seg_start;
    for (int c = 0; c < ACCT_NR; ++c) {
        st.acct.spent[c] += st.seg_cat[c];
        st.seg_cat[c] = 0;
    }
    st.acct.task += sim_.now() - st.seg_start - st.seg_overhead;
}

void cpu_charges::switch_in(rq& r, task_struct& next)
{
    cpu_charge_state& st = state(r);
    st.pending[ACCT_CONTEXT_SWITCH] += jittered(next, cm_.params().context_switch);
    /*
     * kernel: kernel/sched/core.c context_switch() (read in the context of 6.x-era patch
     * mails; not checked against each profile's tag): a task with an mm gets
     * switch_mm_irqs_off(prev->active_mm, next->mm); a kernel thread or the idle task
     * borrows prev's active_mm (enter_lazy_tlb()) and switches nothing. model: every
     * task but idle has an mm, its tgid; the idle task never gets here (switch_to_idle()),
     * so the CPU's loaded mm stays the last task's across an idle period, as lazy TLB
     * keeps it. Without the cost (the default) nothing is tracked, charged or drawn from
     * the jitter stream, so such a machine schedules as before and the context switch's
     * hot path skips the ASID search; the cost is fixed for a run.
     */
    if (cm_.params().switch_mm_flush > 0 && switch_mm(r, next.tgid))
        st.pending[ACCT_CONTEXT_SWITCH] += jittered(next, cm_.params().switch_mm_flush);
    st.pending[ACCT_CACHE_REFILL] += cm_.cache_refill_cost(next, r.cpu, sim_.now());
}

bool cpu_charges::switch_mm(rq& r, int mm)
{
    /*
     * kernel: arch/x86/mm/tlb.c switch_mm_irqs_off() and choose_new_asid() (unchanged in
     * this rule from 4.16, torvalds/linux 016c4d92, to a 6.16+ tree, CachyOS/linux
     * 0ebd1b80): the loaded mm again (real_prev == next) does nothing; otherwise the
     * ASID slot whose ctxs[].ctx_id is next's is reused without a flush, and with no
     * such slot the next one round robin (next_asid, wrapping to 0 after
     * TLB_NR_DYN_ASIDS) is taken and CR3 loaded with a flush. So up to six processes
     * alternating on a CPU keep their TLB entries and a seventh makes every switch in
     * the cycle flush. Differs: X86_FEATURE_PCID assumed (without it every mm change
     * flushes); no tlb_gen (the model unmaps nothing, so a held slot is never stale);
     * no global ASIDs (6.15+, INVLPGB: processes with threads on more than 3 CPUs);
     * no PTI user ASIDs; no leave_mm() on idle states that lose the TLB, and an exec()
     * keeps its tgid's mm.
     */
    cpu_charge_state& st = state(r);
    if (mm == st.loaded_mm)
        return false;
    st.loaded_mm = mm;
    for (const int held : st.asid_mm)
        if (held == mm)
            return false;
    u16 asid = st.next_asid++;
    if (asid >= cpu_charge_state::TLB_NR_DYN_ASIDS) {
        asid = 0;
        st.next_asid = 1;
    }
    st.asid_mm[asid] = mm;
    return true;
}

void cpu_charges::switch_to_idle(rq& r)
{
    cpu_charge_state& st = state(r);
    sim_dur owed = 0;
    for (int c = 0; c < ACCT_NR; ++c) {
        owed += st.pending[c];
        st.acct.idle_work[c] += st.pending[c];
        st.pending[c] = 0;
    }
    st.idle_busy_until = sim_.now() + owed;
    // cpuidle_enter() ran first: the idle state is entered once this work is done.
    st.idle.since = st.idle_busy_until;
}

cost_model::idle_choice cpu_charges::cpuidle_enter(rq& r, menu_version v, sim_dur tick,
                                                   sim_time next_tick, sim_time next_timer)
{
    cpu_idle_state& idle = state(r).idle;
    const sim_time now = sim_.now();
    idle.since = std::max(now, state(r).idle_busy_until);
    idle.next_timer = next_timer > now ? next_timer : -1;
    // No timer known: as far as the governor can tell, a long way off (menu's next_timer_ns
    // is then the watchdog's, seconds away).
    constexpr sim_dur no_timer = 4'000'000'000;
    /*
     * kernel: tick_nohz_get_sleep_length(): the time to the next timer event with the
     * tick stopped (here the CPU's one known timer), and in *delta_next the time to the
     * next event with it running, the tick or that timer, whichever is sooner.
     */
    const sim_dur sleep = idle.next_timer >= 0 ? idle.next_timer - now : no_timer;
    const menu_gov::menu_inputs in{static_cast<u64>(sleep),
                                   static_cast<u64>(std::min(next_tick - now, sleep)),
                                   static_cast<u64>(tick)};
    bool stop_tick = true;
    const int idx = menu_gov::menu_select(idle.menu, v, cm_.idle_driver(), in, &stop_tick);
    idle.state = static_cast<u8>(idx); // the menu governor's choice
    idle.selected = true;
    idle.traced = true;
    return {idle.state, stop_tick};
}

cost_model::idle_choice cpu_charges::cpuidle_tick(rq& r, menu_version v, sim_dur tick)
{
    cpu_idle_state& idle = state(r).idle;
    const sim_time now = sim_.now();
    // menu_reflect(): the period ends with the tick (tick_nohz_idle_got_tick()), measured
    // as cpuidle_enter_state() does, from the entry to the return, the exit included.
    if (idle.selected && now >= idle.since) {
        menu_gov::menu_reflect(idle.menu, idle.state,
                               static_cast<u64>(now - idle.since + cm_.idle_exit_latency(idle)), true);
        idle.selected = false;
    }
    return cpuidle_enter(r, v, tick, now + tick, idle.next_timer);
}

/*
 * kernel: kernel/sched/idle.c do_idle(), 6.18: an interrupt that wakes a task onto a CPU in
 * its idle loop (the CPU's own timer: hrtimer_wakeup(); the wake-list IPI:
 * sched_ttwu_pending(); a reschedule IPI) sets need_resched in the handler; the CPU then
 * finishes the handler and irq_exit(), returns to do_idle(), leaves its loop,
 * tick_nohz_idle_exit() (the idle time's accounting, the tick's restart if it was stopped),
 * flush_smp_call_function_queue(), and only then schedule_idle() -> __schedule() reaches
 * sched_switch. Its own timer's handler, hrtimer_interrupt() (kernel/time/hrtimer.c), also
 * programs the clockevent device for the next expiry after the expired timers ran
 * (tick_program_event()); an IPI's handler does not. Seen on 6.18.44 with tracefs
 * (docs/replay.md, lane replay9): local_timer_entry, hrtimer_expire_entry(hrtimer_wakeup),
 * sched_waking, sched_wakeup, hrtimer_expire_exit, write_msr 6e0 (TSC deadline),
 * local_timer_exit, cpu_idle exit, hrtimer_start(tick_nohz_handler) and write_msr 6e0 (the
 * tick's restart), sched_switch. model: that way is do_idle_exit, plus
 * hrtimer_interrupt_reprogram when the CPU's own timer woke it, charged as idle work when the
 * switch is due (EV_RESCHED), so the switch waits for it; the C-state's exit latency is
 * charged before the handler (remote_notify()), as the hardware spends it. A CPU notified
 * while still in __schedule() to idle never entered the loop and owes nothing.
 * Differs: one figure whether or not the tick was stopped (a restart is a clockevent write
 * more) and whatever else the interrupt did.
 */
bool cpu_charges::charge_do_idle_exit(rq& r)
{
    cpu_charge_state& st = state(r);
    if (!st.do_idle_exit_owed)
        return false;
    const sim_dur ns = cm_.params().do_idle_exit +
                       (st.by_own_timer ? cm_.params().hrtimer_interrupt_reprogram : 0);
    st.do_idle_exit_owed = false;
    st.by_own_timer = false;
    if (ns <= 0)
        return false;
    charge_cpu(r, ns, ACCT_CONTEXT_SWITCH);
    return true;
}

bool cpu_charges::cpuidle_exit(rq& r)
{
    state(r).do_idle_exit_owed = false;
    state(r).by_own_timer = false;
    cpu_idle_state& idle = state(r).idle;
    idle.since = -1;
    const bool traced = idle.traced;
    idle.traced = false;
    return traced;
}

/*
 * end_segment() + begin_segment() for a burst that goes on with a new segment
 * (SMT sharing changes its rate): its completion event moves in place, which
 * orders it exactly as a cancel and a new event would (sim/event_queue.h).
 */
void cpu_charges::restart_segment(rq& r)
{
    end_segment(r);
    sim_.reschedule(r.work_event, sim_.now() + begin_segment(r));
}

void cpu_charges::update_smt_rates(int cpu)
{
    // Only a sibling running a task has a burst to re-rate: with none (the core's busy
    // count is cpu's own), no sibling's rq or task is read.
    if (!cm_.smt_siblings_busy(cpu, !(*rqs_)[static_cast<std::size_t>(cpu)]->curr->is_idle_task()))
        return;
    for (const int s : cm_.smt_siblings(cpu)) {
        rq& sr = *(*rqs_)[static_cast<std::size_t>(s)];
        if (s == cpu || sr.curr->is_idle_task() || !sim_.pending(sr.work_event))
            continue;
        if (cm_.smt_rate_pct(s, true) == state(sr).seg_rate_pct)
            continue;
        restart_segment(sr);
    }
}

} // namespace schedlab
