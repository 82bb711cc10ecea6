// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The menu cpuidle governor (drivers/cpuidle/governors/menu.c), per CPU: its
 * struct menu_device, menu_select(), menu_reflect() and menu_update(), in the
 * kernel's integer arithmetic. The cost model owns one menu_device per CPU
 * (cpu_idle_state::menu) and the idle driver's state table (cost_params'
 * cstate_*); cpu_charges calls menu_select() at an idle entry and at a kept tick
 * that finds the CPU idle, and menu_reflect() when an idle period ends.
 *
 * Each kernel profile runs its version's menu (kernel_behaviour::menu, profiles.cc):
 *
 *  - menu_version::timer_first (5.15, 6.1, 6.5 and their tip bases): the next timer,
 *    its bucket and correction factor first, then min(that, the typical interval),
 *    as menu.c read at torvalds/linux 010e85f9e47c in its 5.7+ nanosecond form;
 *  - menu_version::typical_first (6.6, tip-2023-12, 6.12): the typical interval
 *    first, the next timer only above RESIDENCY_THRESHOLD_NS (5484e31bbbff, v6.6);
 *  - menu_version::v6_18 (6.18): v6.15's get_typical_interval() (one pass for the
 *    average and the variance, outliers dropped at both ends: 8de7606f0fe2), no
 *    performance multiplier ("cpuidle: menu: Remove iowait influence", posted
 *    2024-09-05 by Christian Loehle, after v6.12), the state walk that tests the exit
 *    latency first and lets a polling state give way only to a state whose target
 *    residency is under RESIDENCY_THRESHOLD_NS, and the invalid interval pushed
 *    when the previous idle recorded no residency (read in gregkh/linux v6.18.38's
 *    menu.c as quoted, and gregkh/linux's 6.15+ menu.c).
 */
#include "sim/time.h"

#include <array>

namespace schedlab {

enum class menu_version : u8 { timer_first, typical_first, v6_18 };

/// One idle state as the governor reads it (struct cpuidle_state): index 0 polls.
struct cpuidle_state_desc {
    u64 exit_latency_ns = 0;
    u64 target_residency_ns = 0;
    bool polling = false; ///< CPUIDLE_FLAG_POLLING
};

/// The idle driver's table (struct cpuidle_driver: states[], state_count).
struct cpuidle_driver_desc {
    std::array<cpuidle_state_desc, 3> states{};
    int state_count = 0;
};

inline constexpr int MENU_BUCKETS = 6;          ///< BUCKETS (12 with the iowait half until v6.14)
inline constexpr int MENU_INTERVAL_SHIFT = 3;   ///< INTERVAL_SHIFT
inline constexpr int MENU_INTERVALS = 1 << MENU_INTERVAL_SHIFT;
inline constexpr u64 MENU_RESOLUTION = 1024;    ///< RESOLUTION
inline constexpr u64 MENU_DECAY = 8;            ///< DECAY
inline constexpr u64 MENU_MAX_INTERESTING = 50'000'000; ///< MAX_INTERESTING, 50 ms in ns
inline constexpr u64 RESIDENCY_THRESHOLD_NS = 15'000;   ///< drivers/cpuidle/governors/gov.h
inline constexpr u64 MENU_KTIME_MAX = u64{INT64_MAX};   ///< KTIME_MAX

/*
 * kernel: struct menu_device (menu.c), plus the struct cpuidle_device fields menu reads
 * (last_state_idx, last_residency_ns). The iowait half of the buckets is not kept: no
 * modelled task waits for I/O, so nr_iowait_cpu() is always 0 and the kernels that have
 * it index only the first six.
 */
struct menu_device {
    bool needs_update = false;
    bool tick_wakeup = false;
    u64 next_timer_ns = 0;
    unsigned bucket = 0;
    std::array<unsigned, MENU_BUCKETS> correction_factor{};
    std::array<unsigned, MENU_INTERVALS> intervals{};
    int interval_ptr = 0;
    int last_state_idx = 0;     ///< cpuidle_device::last_state_idx
    u64 last_residency_ns = 0;  ///< cpuidle_device::last_residency_ns

    /// menu_enable_device(): zeroed, every correction factor unity (RESOLUTION * DECAY).
    menu_device() { correction_factor.fill(static_cast<unsigned>(MENU_RESOLUTION * MENU_DECAY)); }
};

namespace menu_gov {

/// which_bucket() without the iowait half.
unsigned which_bucket(u64 duration_ns);
/// menu_update_intervals(): the ring of the last eight idle intervals, in us.
void menu_update_intervals(menu_device& data, unsigned interval_us);
/// get_typical_interval(): the average of the last eight intervals (outliers dropped)
/// when they form a pattern, else UINT_MAX.
unsigned get_typical_interval(const menu_device& data, menu_version v);

/// What the idle loop tells the governor: tick_nohz_get_sleep_length()'s two results
/// (the time to the next timer with the tick stopped, and to the next event with it
/// running) and TICK_NSEC. The tick is always running when a model CPU selects.
struct menu_inputs {
    u64 sleep_length_ns = 0; ///< tick_nohz_get_sleep_length()'s return
    u64 delta_tick_ns = 0;   ///< its *delta_next: the next tick or timer, whichever first
    u64 tick_nsec = 0;       ///< TICK_NSEC
};

/// menu_select(): the state index, and *stop_tick.
int menu_select(menu_device& data, menu_version v, const cpuidle_driver_desc& drv,
                const menu_inputs& in, bool* stop_tick);
/// menu_reflect() with cpuidle_enter_state()'s bookkeeping: the state entered, the
/// residency measured (entry to wakeup, the exit included), and tick_nohz_idle_got_tick().
void menu_reflect(menu_device& data, int index, u64 last_residency_ns, bool got_tick);
/// menu_update(), run by the next menu_select() when needs_update is set.
void menu_update(menu_device& data, const cpuidle_driver_desc& drv, u64 tick_nsec);

} // namespace menu_gov
} // namespace schedlab
