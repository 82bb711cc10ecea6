// SPDX-License-Identifier: GPL-2.0-only
#include "metrics/histogram.h"

#include <bit>
#include <cmath>

namespace schedlab {

std::size_t log_histogram::index_of(u64 v) const
{
    const u64 sub = 1ULL << sub_bits_;
    if (v < sub)
        return static_cast<std::size_t>(v);
    const int msb = 63 - std::countl_zero(v); // >= sub_bits_
    const int shift = msb - sub_bits_;
    const u64 mantissa = (v >> shift) - sub; // 0 .. sub-1
    return static_cast<std::size_t>(sub + static_cast<u64>(shift) * sub + mantissa);
}

u64 log_histogram::lowest_of(std::size_t idx) const
{
    const u64 sub = 1ULL << sub_bits_;
    if (idx < sub)
        return idx;
    const u64 shift = (idx - sub) / sub;
    const u64 mantissa = (idx - sub) % sub;
    return (sub + mantissa) << shift;
}

void log_histogram::add(u64 v, u64 count)
{
    const std::size_t idx = index_of(v);
    if (idx >= buckets_.size())
        buckets_.resize(idx + 1, 0);
    buckets_[idx] += count;
    count_ += count;
    sum_ += static_cast<unsigned __int128>(v) * count;
    if (v > max_)
        max_ = v;
    if (v < min_)
        min_ = v;
}

u64 log_histogram::percentile(double p) const
{
    if (count_ == 0)
        return 0;
    u64 rank = static_cast<u64>(std::ceil(p / 100.0 * static_cast<double>(count_)));
    if (rank < 1)
        rank = 1;
    u64 seen = 0;
    for (std::size_t i = 0; i < buckets_.size(); ++i) {
        seen += buckets_[i];
        if (seen >= rank) {
            const u64 lo = lowest_of(i);
            return lo > max_ ? max_ : lo;
        }
    }
    return max_;
}

void log_histogram::merge(const log_histogram& o)
{
    if (o.buckets_.size() > buckets_.size())
        buckets_.resize(o.buckets_.size(), 0);
    for (std::size_t i = 0; i < o.buckets_.size(); ++i)
        buckets_[i] += o.buckets_[i];
    count_ += o.count_;
    sum_ += o.sum_;
    if (o.count_) {
        max_ = std::max(max_, o.max_);
        min_ = std::min(min_, o.min_);
    }
}

histogram_buckets log_histogram::buckets(int sub_bits) const
{
    const log_histogram coarse_index(sub_bits < sub_bits_ ? sub_bits : sub_bits_);
    histogram_buckets out;
    std::size_t last = ~std::size_t{0};
    for (std::size_t i = 0; i < buckets_.size(); ++i) {
        if (!buckets_[i])
            continue;
        const std::size_t ci = coarse_index.index_of(lowest_of(i));
        if (ci == last)
            out.back().second += buckets_[i];
        else
            out.emplace_back(coarse_index.lowest_of(ci), buckets_[i]);
        last = ci;
    }
    return out;
}

u64 log_histogram::bucket_end(u64 v, int sub_bits)
{
    const log_histogram h(sub_bits);
    const u64 end = h.lowest_of(h.index_of(v) + 1);
    return end > v ? end : ~0ULL; // the top bucket ends past the u64 range
}

} // namespace schedlab
