// SPDX-License-Identifier: GPL-2.0-only
#include "sim/rng.h"

#include <cmath>

namespace schedlab {

u64 fnv1a64(std::string_view s, u64 h)
{
    for (unsigned char c : s) {
        h ^= c;
        h *= 0x100000001b3ULL;
    }
    return h;
}

namespace {
u64 splitmix64(u64& x)
{
    u64 z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
inline u64 rotl(u64 x, int k) { return (x << k) | (x >> (64 - k)); }
} // namespace

rng_stream::rng_stream(u64 seed, std::string_view name)
{
    u64 x = fnv1a64(name) ^ splitmix64(seed);
    for (u64& s : s_)
        s = splitmix64(x);
}

u64 rng_stream::next_u64()
{
    const u64 result = rotl(s_[1] * 5, 7) * 9;
    const u64 t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
}

u64 rng_stream::below(u64 bound)
{
    // Lemire, "Fast Random Integer Generation in an Interval" (2019).
    unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * bound;
    u64 low = static_cast<u64>(m);
    if (low < bound) {
        const u64 threshold = -bound % bound;
        while (low < threshold) {
            m = static_cast<unsigned __int128>(next_u64()) * bound;
            low = static_cast<u64>(m);
        }
    }
    return static_cast<u64>(m >> 64);
}

s64 rng_stream::range(s64 lo, s64 hi)
{
    const u64 span = static_cast<u64>(hi) - static_cast<u64>(lo) + 1;
    if (span == 0) // the full 64-bit range
        return static_cast<s64>(next_u64());
    return lo + static_cast<s64>(below(span));
}

double rng_stream::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

sim_dur rng_stream::exponential(sim_dur mean)
{
    const double u = uniform();
    return static_cast<sim_dur>(std::llround(-std::log1p(-u) * static_cast<double>(mean)));
}

sim_dur rng_stream::jitter(sim_dur v, u32 pct)
{
    if (pct == 0 || v == 0)
        return v;
    // Integer arithmetic: factor in parts per million.
    const s64 spread = static_cast<s64>(pct) * 10000; // ppm
    const s64 ppm = 1000000 + range(-spread, spread);
    // The product in 64 bits when it fits (any v below ~4600 s), where the division by a
    // constant is a multiply and a shift, not a call to the 128-bit divide; both truncate
    // toward zero, so the result is the same.
    s64 prod = 0;
    if (!__builtin_mul_overflow(static_cast<s64>(v), ppm, &prod))
        return static_cast<sim_dur>(prod / 1000000);
    return static_cast<sim_dur>((static_cast<__int128>(v) * ppm) / 1000000);
}

} // namespace schedlab
