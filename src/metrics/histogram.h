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

#include <vector>

namespace schedlab {

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
