// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cost model (cost_model.h): cache lines and locks, refill by distance,
 * C-states and the idle governor, IPIs, SMT sharing.
 */
#include "sched/cost_model.h"

#include "sim/bug.h"

#include <algorithm>

namespace schedlab {

cost_model::cost_model(const machine& m, const cost_params& p) : m_(m), p_(p)
{
    int max_core = 0, max_llc = 0;
    for (int cpu = 0; cpu < m_.nr_cpus(); ++cpu) {
        max_core = std::max(max_core, m_.cpus[static_cast<std::size_t>(cpu)].core);
        max_llc = std::max(max_llc, m_.cpus[static_cast<std::size_t>(cpu)].llc);
    }
    smt_active_ = m_.smt_width() > 1;
    // cpu_smt_mask() per CPU, and the same siblings as a list (ascending) to walk.
    std::vector<std::vector<int>> core_cpus(static_cast<std::size_t>(max_core) + 1);
    for (int cpu = 0; cpu < m_.nr_cpus(); ++cpu)
        core_cpus[static_cast<std::size_t>(core_of(cpu))].push_back(cpu);
    smt_masks_.reserve(static_cast<std::size_t>(m_.nr_cpus()));
    smt_siblings_.reserve(static_cast<std::size_t>(m_.nr_cpus()));
    for (int cpu = 0; cpu < m_.nr_cpus(); ++cpu) {
        const std::vector<int>& sib = core_cpus[static_cast<std::size_t>(core_of(cpu))];
        cpumask mask(m_.nr_cpus());
        for (const int s : sib)
            mask.set(s);
        smt_masks_.push_back(std::move(mask));
        smt_siblings_.push_back(sib);
    }
    core_busy_.assign(static_cast<std::size_t>(max_core) + 1, 0); // every CPU idles at boot
    core_footprint_clock_.assign(static_cast<std::size_t>(max_core) + 1, 0);
    core_data_bytes_.assign(static_cast<std::size_t>(max_core) + 1, 0);
    llc_footprint_clock_.assign(static_cast<std::size_t>(max_llc) + 1, 0);
    /*
     * kernel: the idle driver's states as menu reads them (struct cpuidle_state): state 0
     * is the POLL state of intel_idle / acpi_idle (CPUIDLE_FLAG_POLLING, no exit latency
     * or residency), then C1 and the deep state from the machine's table (cstate_*).
     */
    idle_driver_.state_count = 3;
    idle_driver_.states[0] = {0, 0, true};
    idle_driver_.states[1] = {static_cast<u64>(p_.cstate_c1_exit),
                              static_cast<u64>(p_.cstate_c1_residency), false};
    idle_driver_.states[2] = {static_cast<u64>(p_.cstate_deep_exit),
                              static_cast<u64>(p_.cstate_deep_residency), false};
}

/* ---- cache lines and locks ---- */

u64 cost_model::data_stamp(int cpu) const
{
    const auto core = static_cast<std::size_t>(core_of(cpu));
    return core_footprint_clock_[core] * 1024 + core_data_bytes_[core];
}

void cost_model::data_touch(int cpu, u64 bytes)
{
    core_data_bytes_[static_cast<std::size_t>(core_of(cpu))] += bytes;
}

// model: see cost_model.h.
std::optional<sim_dur> cost_model::data_lines_cost(int from, u64 stamp, int to, u64 lines) const
{
    if (from < 0 || lines == 0)
        return std::nullopt;
    const cpu_distance d = m_.distance(from, to);
    const bool private_to_reader = d == cpu_distance::same || d == cpu_distance::smt;
    if (!private_to_reader) {
        // Read by another core of the LLC: the measured per-line figure of such reads, if any.
        if (d == cpu_distance::llc && p_.line_data_llc > 0)
            return static_cast<sim_dur>(lines) * p_.line_data_llc;
        return static_cast<sim_dur>(lines) * line_cost(from, to);
    }
    if (data_stamp(from) - stamp >= static_cast<u64>(p_.l2_kib) * 1024) {
        // Lost from the private caches: the LLC serves each line (llc_hit), no other core.
        const sim_dur per_line = p_.llc_hit > 0 ? p_.llc_hit : p_.line_llc;
        return static_cast<sim_dur>(lines) * per_line;
    }
    if (d == cpu_distance::smt)
        return static_cast<sim_dur>(lines) * p_.line_smt;
    return std::nullopt;
}

/*
 * model: a spinlock (or a cache line written with an atomic) is a FIFO
 * resource. An acquirer arriving while it is held spins until it is free,
 * then holds it for `hold` plus the transfer of the line from the previous
 * owner's CPU. Differs: the critical section's effect is applied at once
 * (the simulation is atomic per event); only its time is modelled.
 */
std::pair<sim_dur, sim_dur> cost_model::lock_acquire(contended_lock& l, int cpu, sim_dur hold,
                                                     sim_time now) const
{
    // A CPU never waits for its own earlier hold: that hold is already charged to it
    // and runs before anything it does next, so the new hold just follows it.
    const bool mine = l.last_cpu == cpu;
    const sim_dur spin = !mine && l.busy_until > now ? l.busy_until - now : 0;
    const sim_dur held = hold + (mine ? 0 : line_cost(l.last_cpu, cpu));
    l.busy_until = std::max(l.busy_until, now + spin) + held;
    l.last_cpu = cpu;
    l.acquisitions++;
    if (spin > 0) {
        l.contended++;
        l.wait_total += spin;
    }
    return {spin, held};
}

/* ---- refill by distance ---- */

namespace {
/// 2^(-dt / halflife) in 1/65536 units, piecewise linear between halvings.
u64 decay_q16(sim_dur dt, sim_dur halflife)
{
    if (halflife <= 0)
        return 0;
    const s64 k = dt / halflife;
    if (k >= 32)
        return 0;
    const u64 base = 65536ULL >> k;
    const u64 frac = static_cast<u64>(dt % halflife) * 65536ULL / static_cast<u64>(halflife);
    return base - base * frac / 131072ULL; // base * (1 - frac/2)
}
} // namespace

/*
 * model: a task's working set (footprint_kib) is warm in the private caches
 * of the core it last ran on and in that core's LLC. Warmth decays with the
 * time since it left (cache_halflife / llc_halflife) and with what other
 * tasks ran there meanwhile (their footprints against l2_kib / llc_kib).
 * Running again costs refilling the cold part from the nearest level that
 * still has it: the LLC, memory / another LLC of the package, or the other
 * package. The kernel has no such cost; task_hot() only approximates it.
 */
sim_dur cost_model::cache_refill_cost(const task_struct& p, int cpu, sim_time now) const
{
    const auto fp = static_cast<sim_dur>(p.footprint_kib);
    if (fp == 0)
        return 0;
    if (p.last_ran_cpu < 0)
        return fp * p_.refill_mem_per_kib; // first run: everything comes from memory
    const sim_dur dt = now - p.last_ran_end;
    const auto& last = m_.cpus[static_cast<std::size_t>(p.last_ran_cpu)];
    auto warmth = [&](u64 clock_now, u64 clock_then, sim_dur halflife, sim_dur size_kib) {
        const u64 others = clock_now - clock_then;
        const u64 t = decay_q16(dt, halflife);
        if (size_kib <= 0 || others >= static_cast<u64>(size_kib))
            return u64{0};
        return t * (static_cast<u64>(size_kib) - others) / static_cast<u64>(size_kib);
    };
    const u64 w_llc = warmth(llc_footprint_clock_[static_cast<std::size_t>(last.llc)],
                             p.llc_clock_at_leave, p_.llc_halflife, p_.llc_kib);
    const u64 w_priv = warmth(core_footprint_clock_[static_cast<std::size_t>(last.core)],
                              p.core_clock_at_leave, p_.cache_halflife, p_.l2_kib);
    // Per KiB cost of what is not in the private caches, when the LLC is the source.
    const sim_dur from_llc =
        static_cast<sim_dur>((w_llc * static_cast<u64>(p_.refill_llc_per_kib) +
                              (65536 - w_llc) * static_cast<u64>(p_.refill_mem_per_kib)) /
                             65536);
    switch (m_.distance(p.last_ran_cpu, cpu)) {
    case cpu_distance::same:
    case cpu_distance::smt:
        return fp * static_cast<sim_dur>((65536 - w_priv) * static_cast<u64>(from_llc) / 65536);
    case cpu_distance::llc:
        return fp * from_llc;
    case cpu_distance::package:
        return fp * p_.refill_mem_per_kib;
    case cpu_distance::remote:
        return fp * p_.refill_remote_per_kib;
    }
    return 0;
}

void cost_model::task_leaves(task_struct& p, int cpu, sim_time now) const
{
    const auto& cd = m_.cpus[static_cast<std::size_t>(cpu)];
    p.last_ran_cpu = cpu;
    p.last_ran_end = now;
    p.core_clock_at_leave = core_footprint_clock_[static_cast<std::size_t>(cd.core)];
    p.llc_clock_at_leave = llc_footprint_clock_[static_cast<std::size_t>(cd.llc)];
}

void cost_model::task_arrives(const task_struct& p, int cpu)
{
    const auto& cd = m_.cpus[static_cast<std::size_t>(cpu)];
    core_footprint_clock_[static_cast<std::size_t>(cd.core)] += p.footprint_kib;
    llc_footprint_clock_[static_cast<std::size_t>(cd.llc)] += p.footprint_kib;
}

/* ---- C-states and the idle governor ---- */

/*
 * model: the deepest state whose target residency fits an idle of `predicted`: the state
 * a CPU idle since before the run sits in (cpu_charges' constructor); menu_select()
 * (cpuidle_menu.cc) chooses every state after that.
 */
u8 cost_model::idle_select(sim_dur predicted) const
{
    const auto pred = static_cast<u64>(predicted);
    return pred >= static_cast<u64>(p_.cstate_deep_residency) ? 2
           : pred >= static_cast<u64>(p_.cstate_c1_residency) ? 1
                                                              : 0;
}

/*
 * model: what a wakeup waits for the CPU to leave its state. For the deep
 * state that is the measured wake time where the machine has one
 * (cstate_deep_wake), else the declared exit latency (cstate_deep_exit): the
 * driver's figure is the governor's worst-case bound, and on AMD EPYC a wake
 * from the deepest state measures ~5-15 us against the 400 us that ACPI
 * declares for it (preset_costs.cc).
 */
sim_dur cost_model::idle_exit_latency(const cpu_idle_state& idle) const
{
    if (idle.state == 2 && p_.cstate_deep_wake > 0)
        return p_.cstate_deep_wake;
    return declared_exit_latency(idle);
}

/*
 * kernel: struct cpuidle_state::exit_latency of the state the CPU entered
 * (cpuidle_enter_state() -> idle_set_state(); read by idle_get_state()), the
 * driver's table or ACPI _CST figure: the declared latency, where
 * idle_exit_latency() charges the measured wake when the machine has one.
 */
sim_dur cost_model::declared_exit_latency(const cpu_idle_state& idle) const
{
    switch (idle.state) {
    case 1:
        return p_.cstate_c1_exit;
    case 2:
        return p_.cstate_deep_exit;
    default:
        return 0;
    }
}

/* ---- IPIs ---- */

/*
 * model: how long a remote CPU takes to notice a wakeup or reschedule. A busy
 * CPU needs an IPI (the sender spends ipi_send, the target notices after
 * ipi_wakeup); an idle CPU leaves its C-state first, and unless its idle state
 * polls need_resched (cstate_polls) the wakeup is also an IPI. A timer (by ==
 * notify::timer) raises its own interrupt: no IPI, only the idle exit.
 */
cost_model::notify_cost cost_model::remote_notify(cpu_idle_state& idle, bool cpu_idle, notify by,
                                                 sim_time now)
{
    const bool ipi = by == notify::ipi;
    if (cpu_idle) {
        const sim_dur exit = idle_exit_latency(idle);
        /*
         * kernel: cpuidle_enter_state() measures the residency from the entry to the
         * return from the state (the exit included) and menu_reflect() marks it for
         * menu_update() at the next selection; tick_nohz_idle_got_tick() is false for a
         * wakeup or the CPU's own timer. A wakeup before the CPU has entered its state
         * (still paying the work of its switch to idle) ends no period: do_idle() never
         * called the governor.
         */
        if (idle.since >= 0 && idle.selected && now >= idle.since) {
            menu_gov::menu_reflect(idle.menu, idle.state, static_cast<u64>(now - idle.since + exit),
                                   false);
            idle.selected = false;
        }
        notify_cost c{exit, 0, exit};
        wakeup_costs_.idle_exits++;
        wakeup_costs_.idle_exit_delay += c.delay;
        if (idle.state == 2)
            wakeup_costs_.idle_exits_deep++;
        if (ipi && !p_.cstate_polls) {
            wakeup_costs_.idle_ipis++;
            c.sender = p_.ipi_send;
            c.delay += p_.ipi_wakeup;
        }
        return c;
    }
    SIM_BUG_ON(!ipi, "a busy CPU notified by its own timer"); // cpu_charges checks first
    wakeup_costs_.ipis++;
    wakeup_costs_.ipi_delay += p_.ipi_wakeup;
    return {p_.ipi_wakeup, p_.ipi_send};
}

/* ---- SMT sharing ---- */

/// model: two busy SMT siblings each progress at smt_pct % of a whole core.
u32 cost_model::smt_rate_pct(int cpu, bool self_busy) const
{
    if (core_busy_[static_cast<std::size_t>(core_of(cpu))] > (self_busy ? 1 : 0))
        return static_cast<u32>(std::clamp<sim_dur>(p_.smt_pct, 1, 100));
    return 100;
}

} // namespace schedlab
