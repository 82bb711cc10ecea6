// SPDX-License-Identifier: GPL-2.0-only
#include "sched/idle_gap.h"

#include <algorithm>

namespace schedlab {

void idle_gap_stats::span_state::advance(sim_time now)
{
    if (now <= since)
        return;
    const u64 dt = static_cast<u64>(now - since);
    idle_ns += dt * static_cast<u64>(idle);
    waiting_ns += dt * waiting;
    if (waiting)
        idle_waiting_ns += dt * static_cast<u64>(idle);
    if (idle)
        waiting_idle_ns += dt * waiting;
    since = now;
}

void idle_gap_stats::init(const std::vector<int>& llc_of_cpu, const std::vector<int>& llc_weight)
{
    const int nr_llcs = static_cast<int>(llc_weight.size());
    const std::size_t n = llc_of_cpu.size();
    llc_of = llc_of_cpu;
    nr.assign(n, 0);
    spell_start.assign(n, 0);
    spell_llc_waiting.assign(n, 0);
    spell_gate_open.assign(n, 0);
    spell_gate.assign(n, 0);
    spell_avg_idle.assign(n, 0);
    llcs.assign(static_cast<std::size_t>(nr_llcs), span_state{});
    for (const int l : llc_of_cpu)
        if (l >= 0)
            ++llcs[static_cast<std::size_t>(l)].idle;
    machine = span_state{};
    machine.idle = static_cast<int>(n);
    spells = {};
    scan_since.assign(static_cast<std::size_t>(nr_llcs), 0);
    scan_value = llc_weight;
}

void idle_gap_stats::nr_running_changed(int cpu, unsigned now_nr, sim_time now, u64 avg_idle,
                                        u64 gate)
{
    const std::size_t c = static_cast<std::size_t>(cpu);
    const unsigned was = nr[c];
    if (was == now_nr)
        return;
    nr[c] = now_nr;
    const int l = llc_of[c];
    span_state* llc = l >= 0 ? &llcs[static_cast<std::size_t>(l)] : nullptr;
    machine.advance(now);
    if (llc)
        llc->advance(now);
    const auto excess = [](unsigned v) { return v > 1 ? static_cast<u64>(v - 1) : u64{0}; };
    const u64 before = excess(was), after = excess(now_nr);
    machine.waiting = machine.waiting - before + after;
    if (llc)
        llc->waiting = llc->waiting - before + after;
    if (was == 0 && now_nr > 0) { // a spell ends
        --machine.idle;
        if (llc)
            --llc->idle;
        const sim_dur len = now - spell_start[c];
        const std::size_t b = static_cast<std::size_t>(
            std::upper_bound(spell_bounds.begin(), spell_bounds.end(), len) - spell_bounds.begin());
        spell_bucket& s = spells[b];
        ++s.count;
        s.ns += static_cast<u64>(len);
        if (spell_llc_waiting[c]) {
            ++s.llc_waiting;
            s.llc_waiting_ns += static_cast<u64>(len);
            s.avg_idle_sum += spell_avg_idle[c];
            s.gate_sum += spell_gate[c];
            if (spell_gate_open[c])
                ++s.gate_open;
            if (static_cast<u64>(len) >= spell_gate[c])
                ++s.longer_than_gate;
        }
    } else if (was > 0 && now_nr == 0) { // a spell begins
        ++machine.idle;
        if (llc)
            ++llc->idle;
        spell_start[c] = now;
        spell_llc_waiting[c] = llc && llc->waiting ? 1 : 0;
        spell_gate_open[c] = avg_idle >= gate ? 1 : 0;
        spell_gate[c] = gate;
        spell_avg_idle[c] = avg_idle;
    }
}

void idle_gap_stats::nr_idle_scan_set(int llc, int value, sim_time now)
{
    const std::size_t l = static_cast<std::size_t>(llc);
    ++scan_updates;
    const u64 dt = now > scan_since[l] ? static_cast<u64>(now - scan_since[l]) : 0;
    scan_value_ns += dt * static_cast<u64>(scan_value[l]);
    if (scan_value[l] == 0)
        scan_zero_ns += dt;
    scan_since[l] = now;
    scan_value[l] = value;
}

void idle_gap_stats::placed(const char* select, const char* sis, bool on_idle)
{
    for (placement_count& c : placements)
        if (c.select == select && c.sis == sis) {
            ++c.count;
            c.on_idle += on_idle ? 1 : 0;
            return;
        }
    placements.push_back({select, sis, 1, on_idle ? u64{1} : u64{0}});
}

} // namespace schedlab
