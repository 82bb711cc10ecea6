// SPDX-License-Identifier: GPL-2.0-only
#include "workload/replay_flips.h"

#include <algorithm>

namespace schedlab {

namespace {
/// params.h's CONFIG_HZ default: a jiffy of 4 ms (the trace does not give the traced
/// kernel's HZ; record_wakee()'s decay is once a second whatever it is, to a jiffy).
constexpr u64 replay_hz = 250;
constexpr sim_dur jiffy_ns = 1'000'000'000 / replay_hz;
/// Past this many halvings the form is taken as constant: N below 2^32 then moves it by one
/// at most, and the sum in `add` stays below 2^64 (plus stays far below 2^31).
constexpr u32 max_shift = 32;
} // namespace

void flips_form::halve()
{
    if (constant) {
        plus >>= 1;
        return;
    }
    if (shift >= max_shift) {
        plus = at(0) >> 1;
        add = 0;
        shift = 0;
        constant = true;
        return;
    }
    add += plus << shift;
    plus = 0;
    ++shift;
}

bool flips_wide(u64 waker, u64 wakee, u64 llc_size)
{
    // kernel: fair.c wake_wide(), 6.18: master the larger count, slave the smaller.
    const u64 master = std::max(waker, wakee), slave = std::min(waker, wakee);
    return !(slave < llc_size || master < slave * llc_size);
}

void flips_reader::root(int pid, sim_time ts)
{
    state& s = s_[pid];
    s = {};
    s.decay_jiffy = static_cast<u64>(std::max<sim_time>(ts, 0) / jiffy_ns);
    s.root = pid;
}

void flips_reader::fork(int parent, int child)
{
    const auto it = s_.find(parent);
    if (it != s_.end())
        s_[child] = it->second; // dup_task_struct(): flips, decay stamp, last_wakee
}

void flips_reader::record_wakee(int waker, int wakee, sim_time ts)
{
    const auto it = s_.find(waker);
    if (it == s_.end())
        return;
    // kernel: fair.c record_wakee(), 6.18: time_after(jiffies, decay_ts + HZ) halves.
    state& s = it->second;
    const u64 j = static_cast<u64>(std::max<sim_time>(ts, 0) / jiffy_ns);
    if (j > s.decay_jiffy + replay_hz) {
        s.f.halve();
        s.decay_jiffy = j;
    }
    if (s.last_wakee != wakee) {
        s.last_wakee = wakee;
        s.f.flip();
    }
}

void flips_reader::placed(int waker, int wakee, int cpu, int prev_cpu)
{
    const auto w = s_.find(waker), p = s_.find(wakee);
    if (w == s_.end() || p == s_.end() || w->second.root != waker || p->second.root != waker)
        return;
    const auto b = burst_.find(waker);
    if (b != burst_.end() && b->second < 0)
        return; // the root's first burst is over
    pending_[wakee] = {
        {w->second.f, p->second.f, cpu, wakeup_target::other, busy(prev_cpu)}, waker, prev_cpu};
    if (b == burst_.end()) {
        burst_[waker] = static_cast<long>(out_.size());
        out_.push_back({waker, {}});
    }
}

void flips_reader::placed_on(int pid, int cpu)
{
    const auto it = pending_.find(pid);
    if (it == pending_.end())
        return;
    pending& p = it->second;
    p.e.where = classify_wakeup_target(p.e.cpu, p.prev_cpu, cpu);
    const auto b = burst_.find(p.root);
    // The wakee's run may come after the root's burst ended: its wakeup was in the burst.
    out_[static_cast<std::size_t>(b->second < 0 ? -b->second - 2 : b->second)].evidence.push_back(
        p.e);
    pending_.erase(it);
}

void flips_reader::cpu_switched(int cpu, int next)
{
    if (cpu < 0)
        return;
    const auto c = static_cast<std::size_t>(cpu);
    if (curr_.size() <= c)
        curr_.resize(c + 1, 0);
    curr_[c] = next;
    if (const auto it = queued_on_.find(next); it != queued_on_.end()) {
        --queued_[static_cast<std::size_t>(it->second)];
        queued_on_.erase(it);
    }
}

void flips_reader::cpu_woken(int pid, int cpu)
{
    if (cpu < 0 || pid <= 0)
        return;
    const auto c = static_cast<std::size_t>(cpu);
    if (queued_.size() <= c)
        queued_.resize(c + 1, 0);
    const auto [it, fresh] = queued_on_.try_emplace(pid, cpu);
    if (!fresh)
        --queued_[static_cast<std::size_t>(it->second)];
    it->second = cpu;
    ++queued_[c];
}

void flips_reader::blocked(int pid)
{
    const auto b = burst_.find(pid);
    if (b != burst_.end() && b->second >= 0)
        b->second = -b->second - 2; // ended; -2 - index keeps the index
}

std::vector<flips_root> flips_reader::finish()
{
    std::vector<flips_root> out;
    for (flips_root& r : out_)
        if (!r.evidence.empty())
            out.push_back(std::move(r));
    return out;
}

} // namespace schedlab
