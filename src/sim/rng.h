// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Seeded random streams of our own.
 *
 * A stream is identified by (seed, name): rng_stream(42, "hackbench/costs")
 * always yields the same sequence on every platform and standard library. The
 * generator is xoshiro256** seeded through splitmix64 from a 64-bit FNV-1a
 * hash of the name mixed with the seed. Samplers are written here rather than
 * taken from <random>, whose distributions differ between implementations.
 */
#include "sim/time.h"

#include <string_view>

namespace schedlab {

class rng_stream {
public:
    rng_stream(u64 seed, std::string_view name);

    u64 next_u64();
    /// Uniform integer in [0, bound), bound > 0 (Lemire's unbiased multiply-shift).
    u64 below(u64 bound);
    /// Uniform integer in [lo, hi], lo <= hi.
    s64 range(s64 lo, s64 hi);
    /// Uniform double in [0, 1) with 53 random bits.
    double uniform();
    /// Exponential with the given mean (inverse-CDF), rounded to ns, mean >= 0.
    sim_dur exponential(sim_dur mean);
    /// Multiplies v by a factor uniform in [1 - pct/100, 1 + pct/100], rounded to ns.
    sim_dur jitter(sim_dur v, u32 pct);

private:
    u64 s_[4];
};

/// 64-bit FNV-1a of a string (stable stream identifiers and digests).
u64 fnv1a64(std::string_view s, u64 h = 0xcbf29ce484222325ULL);

} // namespace schedlab
