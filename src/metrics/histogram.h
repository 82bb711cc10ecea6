// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * A log-linear histogram of non-negative integer samples (ns), in the
 * spirit of HdrHistogram: values below 2^sub_bits are exact; above, each
 * power of two is split into 2^sub_bits buckets, so a percentile is reported
 * with a relative error below 2^-sub_bits (0.8% with the default 7 bits).
 * Percentiles use the nearest-rank rule and report the bucket's lowest value.
 */
#include "sim/time.h"

#include <utility>
#include <vector>

namespace schedlab {

/// A histogram's non-empty buckets as (the bucket's lowest value, count), ascending.
using histogram_buckets = std::vector<std::pair<u64, u64>>;

class log_histogram {
public:
    explicit log_histogram(int sub_bits = 7) : sub_bits_(sub_bits) {}

    void add(u64 v, u64 count = 1);
    u64 count() const { return count_; }
    u64 max() const { return max_; }
    u64 min() const { return count_ ? min_ : 0; }
    double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0; }
    /// Nearest-rank percentile, p in (0, 100]; 0 if empty.
    u64 percentile(double p) const;
    void merge(const log_histogram& o);
    /*
     * The non-empty buckets at a coarser resolution (sub_bits <= this one's): each coarse
     * bucket is a union of whole fine buckets, so counts are exact and a value's coarse
     * bucket is the one holding its fine bucket's lowest value. Adding each (lowest, count)
     * to a log_histogram(sub_bits) rebuilds the coarse histogram (its sum and max are then
     * bucket-exact only).
     */
    histogram_buckets buckets(int sub_bits) const;
    /// The lowest value of the bucket after the one holding v, at `sub_bits` resolution
    /// (the exclusive upper end of v's bucket).
    static u64 bucket_end(u64 v, int sub_bits);

private:
    std::size_t index_of(u64 v) const;
    u64 lowest_of(std::size_t idx) const;

    int sub_bits_;
    std::vector<u64> buckets_;
    u64 count_ = 0;
    u64 max_ = 0;
    u64 min_ = ~0ULL;
    unsigned __int128 sum_ = 0;
};

} // namespace schedlab
