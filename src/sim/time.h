// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Simulated time: signed 64-bit nanoseconds since the start of a run.
 *
 * The scheduler model uses the kernel's unsigned clocks (u64 rq->clock) and
 * wrap-safe comparisons; the engine itself keeps a plain signed count so that
 * differences are ordinary arithmetic. 2^63 ns is ~292 years of simulated time.
 */
#include <cstdint>

namespace schedlab {

using u8 = std::uint8_t;
using s8 = std::int8_t;
using u16 = std::uint16_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;
using s16 = std::int16_t;
using s32 = std::int32_t;
using s64 = std::int64_t;

using sim_time = s64; ///< absolute simulated time, ns
using sim_dur = s64;  ///< a duration, ns

constexpr sim_dur NSEC_PER_USEC = 1000;
constexpr sim_dur NSEC_PER_MSEC = 1000 * 1000;
constexpr sim_dur NSEC_PER_SEC = 1000 * 1000 * 1000;

constexpr sim_dur usecs(s64 v) { return v * NSEC_PER_USEC; }
constexpr sim_dur msecs(s64 v) { return v * NSEC_PER_MSEC; }
constexpr sim_dur secs(s64 v) { return v * NSEC_PER_SEC; }

} // namespace schedlab
