// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * A set of CPU numbers, like the kernel's struct cpumask, sized at run time.
 * Iteration is always in ascending CPU order (or wrap-around order from a
 * start CPU, like for_each_cpu_wrap()), never in hash or pointer order.
 */
#include "sim/time.h"

#include <bit>
#include <string>
#include <vector>

namespace schedlab {

class cpumask {
public:
    cpumask() = default;
    explicit cpumask(int nr_cpu_ids) : nr_(nr_cpu_ids), w_((nr_cpu_ids + 63) / 64, 0) {}

    int nr_cpu_ids() const { return nr_; }
    void set(int cpu) { w_[cpu >> 6] |= 1ULL << (cpu & 63); }
    void clear(int cpu) { w_[cpu >> 6] &= ~(1ULL << (cpu & 63)); }
    bool test(int cpu) const
    {
        return cpu >= 0 && cpu < nr_ && (w_[cpu >> 6] >> (cpu & 63)) & 1;
    }
    void set_all()
    {
        for (int cpu = 0; cpu < nr_; ++cpu)
            set(cpu);
    }
    void clear_all()
    {
        for (auto& w : w_)
            w = 0;
    }

    int weight() const
    {
        int n = 0;
        for (u64 w : w_)
            n += std::popcount(w);
        return n;
    }
    bool empty() const
    {
        for (u64 w : w_)
            if (w)
                return false;
        return true;
    }
    /// First set CPU >= from, or nr_cpu_ids() if none.
    int next(int from) const
    {
        if (from < 0)
            from = 0;
        for (int i = from >> 6; i < static_cast<int>(w_.size()); ++i) {
            u64 w = w_[i];
            if (i == from >> 6)
                w &= ~0ULL << (from & 63);
            if (w)
                return i * 64 + std::countr_zero(w);
        }
        return nr_;
    }
    int first() const { return next(0); }

    bool intersects(const cpumask& o) const
    {
        for (std::size_t i = 0; i < w_.size(); ++i)
            if (w_[i] & o.w_[i])
                return true;
        return false;
    }
    bool is_subset_of(const cpumask& o) const
    {
        for (std::size_t i = 0; i < w_.size(); ++i)
            if (w_[i] & ~o.w_[i])
                return false;
        return true;
    }
    cpumask& operator|=(const cpumask& o)
    {
        for (std::size_t i = 0; i < w_.size(); ++i)
            w_[i] |= o.w_[i];
        return *this;
    }
    cpumask& operator&=(const cpumask& o)
    {
        for (std::size_t i = 0; i < w_.size(); ++i)
            w_[i] &= o.w_[i];
        return *this;
    }
    /// kernel: cpumask_and(this, a, b): this = a & b, in this mask's own storage (no
    /// allocation once it has the width of a and b).
    cpumask& assign_and(const cpumask& a, const cpumask& b)
    {
        nr_ = a.nr_;
        w_.resize(a.w_.size());
        for (std::size_t i = 0; i < w_.size(); ++i)
            w_[i] = a.w_[i] & b.w_[i];
        return *this;
    }
    cpumask& andnot(const cpumask& o)
    {
        for (std::size_t i = 0; i < w_.size(); ++i)
            w_[i] &= ~o.w_[i];
        return *this;
    }
    friend cpumask operator|(cpumask a, const cpumask& b) { return a |= b; }
    friend cpumask operator&(cpumask a, const cpumask& b) { return a &= b; }
    friend bool operator==(const cpumask& a, const cpumask& b)
    {
        return a.nr_ == b.nr_ && a.w_ == b.w_;
    }

    /// Ascending CPU numbers.
    std::vector<int> to_vector() const
    {
        std::vector<int> v;
        for (int cpu = first(); cpu < nr_; cpu = next(cpu + 1))
            v.push_back(cpu);
        return v;
    }
    /// The kernel's "%*pbl" list form: "0-7,128-135"; empty mask prints "".
    std::string to_cpulist() const
    {
        std::string s;
        int cpu = first();
        while (cpu < nr_) {
            int end = cpu;
            while (end + 1 < nr_ && test(end + 1))
                ++end;
            if (!s.empty())
                s += ',';
            s += std::to_string(cpu);
            if (end > cpu)
                s += '-' + std::to_string(end);
            cpu = next(end + 1);
        }
        return s;
    }

private:
    int nr_ = 0;
    std::vector<u64> w_;
};

/// for_each_cpu(cpu, mask)
#define for_each_cpu(cpu, mask)                                                                    \
    for (int cpu = (mask).first(); cpu < (mask).nr_cpu_ids(); cpu = (mask).next(cpu + 1))

/// Visits the CPUs of `mask` starting at `start` and wrapping around, as for_each_cpu_wrap().
template <typename F> void for_each_cpu_wrap(const cpumask& mask, int start, F&& f)
{
    const int n = mask.nr_cpu_ids();
    for (int cpu = mask.next(start); cpu < n; cpu = mask.next(cpu + 1))
        if (!f(cpu))
            return;
    for (int cpu = mask.first(); cpu < start && cpu < n; cpu = mask.next(cpu + 1))
        if (!f(cpu))
            return;
}

} // namespace schedlab
