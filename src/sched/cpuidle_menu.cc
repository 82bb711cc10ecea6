// SPDX-License-Identifier: GPL-2.0-only
/* The menu cpuidle governor (cpuidle_menu.h). */
#include "sched/cpuidle_menu.h"

#include <algorithm>
#include <climits>

namespace schedlab::menu_gov {

namespace {

constexpr u64 MENU_NSEC_PER_USEC = 1000;
/// cpuidle_governor_latency_req() with no PM QoS request: PM_QOS_CPU_LATENCY_DEFAULT_VALUE
/// (S32_MAX us) in ns.
constexpr u64 MENU_NO_LATENCY_REQ = u64{INT32_MAX} * MENU_NSEC_PER_USEC;

/*
 * kernel: get_typical_interval() up to v6.14 (menu.c at torvalds/linux 010e85f9e47c and
 * 5484e31bbbff's form): outliers are dropped from the top only (thresh = max - 1), the
 * variance is a second pass over (value - avg)^2. `timer_us`: the timer_first kernels
 * pass predicted_us and give up when every interval is at least that long (5484e31bbbff
 * replaced that test by `if (!max)`); 0 means the typical_first form.
 */
unsigned menu_typical_one_sided(const menu_device& data, bool timer_first, unsigned timer_us)
{
    unsigned thresh = INT_MAX;
    for (;;) {
        unsigned min = UINT_MAX, max = 0;
        u64 sum = 0;
        unsigned divisor = 0;
        for (const unsigned value : data.intervals) {
            if (value <= thresh) {
                sum += value;
                divisor++;
                max = std::max(max, value);
                min = std::min(min, value);
            }
        }
        if (timer_first) {
            if (min >= timer_us)
                return UINT_MAX;
        } else if (!max) {
            return UINT_MAX;
        }
        const unsigned avg = divisor == MENU_INTERVALS
                                 ? static_cast<unsigned>(sum >> MENU_INTERVAL_SHIFT)
                                 : static_cast<unsigned>(sum / divisor);
        u64 variance = 0;
        for (const unsigned value : data.intervals) {
            if (value <= thresh) {
                const s64 diff = static_cast<s64>(value) - static_cast<s64>(avg);
                variance += static_cast<u64>(diff * diff);
            }
        }
        if (divisor == MENU_INTERVALS)
            variance >>= MENU_INTERVAL_SHIFT;
        else
            variance /= divisor;
        if (variance <= UINT64_MAX / 36) {
            if ((static_cast<u64>(avg) * avg > variance * 36 &&
                 divisor * 4 >= MENU_INTERVALS * 3) ||
                variance <= 400)
                return avg;
        }
        if (divisor * 4 <= MENU_INTERVALS * 3)
            return UINT_MAX;
        thresh = max - 1;
    }
}

/*
 * kernel: get_typical_interval() from v6.15: one pass for the sum and the sum of squares
 * (variance = E[x^2] - avg^2), and the samples farthest from the average dropped at
 * whichever end they are (8de7606f0fe2). v6.15's "return max" when at least half the
 * samples remain was taken out again before v6.18 (the stable diff that restores the
 * plain UINT_MAX return); as modelled.
 */
unsigned menu_typical_two_sided(const menu_device& data)
{
    s64 min_thresh = -1, max_thresh = UINT_MAX;
    for (;;) {
        unsigned max = 0, min = UINT_MAX, divisor = 0;
        u64 avg = 0, variance = 0;
        for (const unsigned raw : data.intervals) {
            const s64 value = raw;
            if (value <= min_thresh || value >= max_thresh)
                continue;
            divisor++;
            avg += raw;
            variance += static_cast<u64>(raw) * raw;
            max = std::max(max, raw);
            min = std::min(min, raw);
        }
        if (!max)
            return UINT_MAX;
        if (divisor == MENU_INTERVALS) {
            avg >>= MENU_INTERVAL_SHIFT;
            variance >>= MENU_INTERVAL_SHIFT;
        } else {
            avg /= divisor;
            variance /= divisor;
        }
        const u64 avg_sq = avg * avg;
        variance -= avg_sq;
        if (variance <= UINT64_MAX / 36) {
            if ((avg_sq > variance * 36 && divisor * 4 >= MENU_INTERVALS * 3) || variance <= 400)
                return static_cast<unsigned>(avg);
        }
        if (divisor * 4 <= MENU_INTERVALS * 3)
            return UINT_MAX;
        if (avg - min > max - avg)
            min_thresh = min;
        else
            max_thresh = max;
    }
}

/// The correction-factor prediction of menu_select(), rounded to the nearest us.
unsigned menu_timer_us(const menu_device& data)
{
    constexpr u64 div = MENU_RESOLUTION * MENU_DECAY * MENU_NSEC_PER_USEC;
    return static_cast<unsigned>((div / 2 + data.next_timer_ns * data.correction_factor[data.bucket]) /
                                 div);
}

} // namespace

unsigned which_bucket(u64 duration_ns)
{
    if (duration_ns < 10 * MENU_NSEC_PER_USEC)
        return 0;
    if (duration_ns < 100 * MENU_NSEC_PER_USEC)
        return 1;
    if (duration_ns < 1000 * MENU_NSEC_PER_USEC)
        return 2;
    if (duration_ns < 10000 * MENU_NSEC_PER_USEC)
        return 3;
    if (duration_ns < 100000 * MENU_NSEC_PER_USEC)
        return 4;
    return 5;
}

void menu_update_intervals(menu_device& data, unsigned interval_us)
{
    data.intervals[static_cast<std::size_t>(data.interval_ptr++)] = interval_us;
    if (data.interval_ptr >= MENU_INTERVALS)
        data.interval_ptr = 0;
}

unsigned get_typical_interval(const menu_device& data, menu_version v)
{
    return v == menu_version::v6_18 ? menu_typical_two_sided(data)
                                    : menu_typical_one_sided(data, false, 0);
}

/*
 * kernel: menu_select() (menu.c), by menu_version (cpuidle_menu.h). Differs: no PM QoS
 * (latency_req is the default, S32_MAX us), no disabled states, and the tick is always
 * running at a selection (a model CPU selects at its switch to idle, with the tick of the
 * task that ran, and at a kept tick), so the tick_nohz_tick_stopped() branches are not
 * reached.
 */
int menu_select(menu_device& data, menu_version v, const cpuidle_driver_desc& drv,
                const menu_inputs& in, bool* stop_tick)
{
    u64 latency_req = MENU_NO_LATENCY_REQ;
    const u64 tick_nsec = in.tick_nsec;
    u64 delta_tick = in.delta_tick_ns;
    u64 predicted_ns = 0;

    if (data.needs_update) {
        menu_update(data, drv, tick_nsec);
        data.needs_update = false;
    } else if (v == menu_version::v6_18 && !data.last_residency_ns) {
        menu_update_intervals(data, UINT_MAX);
    }

    if (v == menu_version::timer_first) {
        data.next_timer_ns = in.sleep_length_ns;
        data.bucket = which_bucket(data.next_timer_ns);
    } else {
        predicted_ns = u64{get_typical_interval(data, v)} * MENU_NSEC_PER_USEC;
        if (predicted_ns > RESIDENCY_THRESHOLD_NS) {
            data.next_timer_ns = in.sleep_length_ns;
            data.bucket = which_bucket(data.next_timer_ns);
            predicted_ns = std::min(u64{menu_timer_us(data)} * MENU_NSEC_PER_USEC, predicted_ns);
        } else {
            // No timer looked up: assumed far away, the tick half a period off.
            data.next_timer_ns = MENU_KTIME_MAX;
            delta_tick = tick_nsec / 2;
            data.bucket = which_bucket(MENU_KTIME_MAX);
        }
    }

    if (drv.state_count <= 1 ||
        ((data.next_timer_ns < drv.states[1].target_residency_ns ||
          latency_req < drv.states[1].exit_latency_ns))) {
        // State 0 whatever happens; the tick is kept if it polls.
        *stop_tick = !drv.states[0].polling;
        return 0;
    }

    if (v == menu_version::timer_first) {
        const unsigned timer_us = menu_timer_us(data);
        predicted_ns = std::min(u64{timer_us},
                                u64{menu_typical_one_sided(data, true, timer_us)}) *
                       MENU_NSEC_PER_USEC;
    }
    // The performance multiplier (1 + 10 x nr_iowaiters, 1 here) bounds the exit latency
    // by the prediction until v6.14.
    if (v != menu_version::v6_18)
        latency_req = std::min(latency_req, predicted_ns);

    int idx = -1;
    // The walk ends at state i, deeper than the prediction (both forms): a physical state
    // rather than polling when `physical_ok` (a timer comes soon enough), else idx stays
    // and, if the tick runs, the prediction becomes idx's residency so the next tick
    // selects again.
    const auto end_walk_at_deeper = [&](int i, bool physical_ok) {
        if (drv.states[static_cast<std::size_t>(idx)].polling && physical_ok) {
            predicted_ns = drv.states[static_cast<std::size_t>(i)].target_residency_ns;
            idx = i;
        } else if (predicted_ns >= tick_nsec) {
            predicted_ns = drv.states[static_cast<std::size_t>(idx)].target_residency_ns;
        }
    };
    for (int i = 0; i < drv.state_count; i++) {
        const cpuidle_state_desc& s = drv.states[static_cast<std::size_t>(i)];
        if (idx == -1)
            idx = i;
        if (v == menu_version::v6_18) {
            if (s.exit_latency_ns > latency_req)
                break;
            if (s.target_residency_ns <= predicted_ns) {
                idx = i;
                continue;
            }
            end_walk_at_deeper(i, s.target_residency_ns < RESIDENCY_THRESHOLD_NS &&
                                      s.target_residency_ns <= data.next_timer_ns &&
                                      s.exit_latency_ns <= predicted_ns);
            break;
        }
        if (s.target_residency_ns > predicted_ns) {
            end_walk_at_deeper(i, s.exit_latency_ns <= latency_req &&
                                      s.target_residency_ns <= data.next_timer_ns);
            break;
        }
        if (s.exit_latency_ns > latency_req)
            break;
        idx = i;
    }
    if (idx == -1)
        idx = 0;

    // A polling state, or an idle shorter than a tick: the tick stays, and the state must
    // end by the next tick or timer.
    if (drv.states[static_cast<std::size_t>(idx)].polling || predicted_ns < tick_nsec) {
        *stop_tick = false;
        if (idx > 0 && drv.states[static_cast<std::size_t>(idx)].target_residency_ns > delta_tick) {
            for (int i = idx - 1; i >= 0; i--) {
                idx = i;
                if (drv.states[static_cast<std::size_t>(i)].target_residency_ns <= delta_tick)
                    break;
            }
        }
    } else {
        *stop_tick = true;
    }
    return idx;
}

void menu_reflect(menu_device& data, int index, u64 last_residency_ns, bool got_tick)
{
    data.last_state_idx = index;
    data.last_residency_ns = last_residency_ns;
    data.needs_update = true;
    data.tick_wakeup = got_tick;
}

/*
 * kernel: menu_update() (menu.c, the same in every modelled version). Differs: a polling
 * state has no time limit here (poll_idle()'s cpuidle_poll_time()), so the
 * poll_time_limit branch is not reached.
 */
void menu_update(menu_device& data, const cpuidle_driver_desc& drv, u64 tick_nsec)
{
    const cpuidle_state_desc& target = drv.states[static_cast<std::size_t>(data.last_state_idx)];
    u64 measured_ns;
    if (data.tick_wakeup && data.next_timer_ns > tick_nsec) {
        // Woken by a tick the governor kept, with no timer within it: "idle long (but not
        // forever)".
        measured_ns = 9 * MENU_MAX_INTERESTING / 10;
    } else {
        measured_ns = data.last_residency_ns;
        if (measured_ns > 2 * target.exit_latency_ns)
            measured_ns -= target.exit_latency_ns;
        else
            measured_ns /= 2;
    }
    measured_ns = std::min(measured_ns, data.next_timer_ns);

    unsigned new_factor = data.correction_factor[data.bucket];
    new_factor -= new_factor / static_cast<unsigned>(MENU_DECAY);
    if (data.next_timer_ns > 0 && measured_ns < MENU_MAX_INTERESTING)
        new_factor += static_cast<unsigned>(MENU_RESOLUTION * measured_ns / data.next_timer_ns);
    else
        new_factor += static_cast<unsigned>(MENU_RESOLUTION);
    data.correction_factor[data.bucket] = new_factor;

    menu_update_intervals(data, static_cast<unsigned>(measured_ns / MENU_NSEC_PER_USEC));
}

} // namespace schedlab::menu_gov
