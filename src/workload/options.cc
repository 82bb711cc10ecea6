// SPDX-License-Identifier: GPL-2.0-only
/*
 * Option parsing for the benchmark command lines (see options.h).
 */
#include "workload/options.h"

#include "sim/config_error.h"
#include "sim/file_io.h"

#include <fmt/format.h>

#include <charconv>
#include <climits>

namespace schedlab {

namespace {

bool takes_value(const option_spec& s)
{
    return s.uinteger || s.text;
}

std::string display(const option_spec& s)
{
    if (s.short_name && !s.long_name.empty())
        return fmt::format("-{}/--{}", s.short_name, s.long_name);
    if (s.short_name)
        return fmt::format("-{}", s.short_name);
    return "--" + s.long_name;
}

void set_value(const option_spec& s, const std::string& shown, const std::string& value,
               const std::string& where)
{
    if (!s.unsupported.empty())
        throw config_error(where,
                           fmt::format("option '{}' is not modelled: {}", shown, s.unsupported));
    if (s.text) {
        *s.text = value;
        return;
    }
    // OPT_UINTEGER: decimal digits only; perf rejects negative values.
    bool ok = !value.empty() && value.size() <= 10;
    unsigned long long v = 0;
    for (char ch : value) {
        if (ch < '0' || ch > '9') {
            ok = false;
            break;
        }
        v = v * 10 + static_cast<unsigned>(ch - '0');
    }
    if (!ok || v > UINT_MAX)
        throw config_error(
            where,
            fmt::format("option '{}' expects an integer from 0 to {} (perf's OPT_UINTEGER, an "
                        "unsigned int), got '{}'",
                        shown, UINT_MAX, value));
    *s.uinteger = static_cast<unsigned>(v);
}

void set_flag(const option_spec& s, const std::string& shown, bool on, const std::string& where)
{
    if (!s.unsupported.empty())
        throw config_error(where,
                           fmt::format("option '{}' is not modelled: {}", shown, s.unsupported));
    *s.flag = on;
}

std::string unknown(const std::string& shown, const std::vector<option_spec>& specs)
{
    return fmt::format("unknown option '{}' (accepted: {})", shown, options_summary(specs));
}

} // namespace

std::string options_summary(const std::vector<option_spec>& specs)
{
    std::string out;
    for (const option_spec& s : specs) {
        if (!s.unsupported.empty())
            continue;
        if (!out.empty())
            out += ", ";
        out += display(s);
        if (takes_value(s))
            out += s.uinteger ? " N" : " VALUE";
    }
    return out;
}

long long parse_integer(const std::string& value, const std::string& name,
                        const std::string& where, long long min, long long max)
{
    long long v = 0;
    const auto res = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || res.ec != std::errc() || res.ptr != value.data() + value.size())
        throw config_error(where,
                           fmt::format("option '{}' expects an integer, got '{}'", name, value));
    if (v < min || v > max)
        throw config_error(where, fmt::format("option '{}': {} is out of range [{}, {}]", name,
                                              value, min, max));
    return v;
}

sim_dur parse_seconds(const std::string& value, const std::string& name, const std::string& where)
{
    // Digits with at most one '.', up to nanosecond precision; no exponent, no sign.
    sim_dur whole = 0;
    sim_dur frac = 0;
    sim_dur scale = NSEC_PER_SEC;
    bool dot = false;
    bool digits = false;
    bool ok = !value.empty() && value.size() <= 18;
    for (char ch : value) {
        if (ch == '.' && !dot) {
            dot = true;
            continue;
        }
        if (ch < '0' || ch > '9') {
            ok = false;
            break;
        }
        digits = true;
        if (!dot) {
            whole = whole * 10 + (ch - '0');
            if (whole > 1'000'000'000) { // refused below; stop before the sum can overflow
                ok = false;
                break;
            }
        } else if (scale > 1) {
            scale /= 10;
            frac += (ch - '0') * scale;
        }
    }
    if (!ok || !digits || whole > 1'000'000'000)
        throw config_error(where, fmt::format("option '{}' expects a number of seconds, got '{}'",
                                              name, value));
    return whole * NSEC_PER_SEC + frac;
}

void check_task_count(double tasks, double bytes_per_task, const std::string& how,
                      const std::string& where)
{
    if (tasks > pid_max_limit)
        throw config_error(where, fmt::format("{} = {:.0f} tasks, more than a kernel can run "
                                              "(PID_MAX_LIMIT, {:.0f})",
                                              how, tasks, pid_max_limit));
    const double budget = memory_budget_bytes();
    check_memory_estimate(
        tasks * bytes_per_task,
        fmt::format("{} = {:.0f} tasks (at most {:.0f} here)", how, tasks, budget / bytes_per_task),
        where);
}

void parse_options(const std::vector<std::string>& args, const std::vector<option_spec>& specs,
                   const std::string& where, std::vector<std::string>* positional)
{
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (positional && a == "--") {
            positional->insert(positional->end(), args.begin() + static_cast<long>(i) + 1,
                               args.end());
            return;
        }
        auto next_value = [&](const std::string& shown) -> std::string {
            if (i + 1 >= args.size())
                throw config_error(where, fmt::format("option '{}' requires a value", shown));
            return args[++i];
        };

        if (a.size() > 2 && a[0] == '-' && a[1] == '-') {
            // --name, --name=value, --no-name, or an unambiguous prefix of a name.
            std::string name = a.substr(2);
            std::string value;
            bool has_value = false;
            if (auto eq = name.find('='); eq != std::string::npos) {
                value = name.substr(eq + 1);
                name = name.substr(0, eq);
                has_value = true;
            }
            bool negated = false;
            const option_spec* match = nullptr;
            int nr_matches = 0;
            auto find = [&](const std::string& n) {
                match = nullptr;
                nr_matches = 0;
                for (const option_spec& s : specs) {
                    if (s.long_name == n) {
                        match = &s;
                        nr_matches = 1;
                        return;
                    }
                }
                for (const option_spec& s : specs) {
                    if (!s.long_name.empty() && s.long_name.compare(0, n.size(), n) == 0) {
                        match = &s;
                        ++nr_matches;
                    }
                }
            };
            find(name);
            if (!match && name.compare(0, 3, "no-") == 0) {
                find(name.substr(3));
                negated = match && match->flag;
                if (!negated)
                    match = nullptr;
            }
            if (nr_matches > 1)
                throw config_error(where, fmt::format("option '{}' is ambiguous", a));
            if (!match)
                throw config_error(where, unknown(has_value ? "--" + name : a, specs));
            const std::string shown = "--" + match->long_name;
            if (match->flag) {
                if (has_value)
                    throw config_error(where, fmt::format("option '{}' takes no value", shown));
                set_flag(*match, shown, !negated, where);
            } else {
                set_value(*match, shown, has_value ? value : next_value(shown), where);
            }
            continue;
        }

        if (a.size() >= 2 && a[0] == '-' && a != "--") {
            // A cluster of short options: booleans, then at most one that takes a value.
            for (std::size_t j = 1; j < a.size(); ++j) {
                const char c = a[j];
                const option_spec* match = nullptr;
                for (const option_spec& s : specs)
                    if (s.short_name == c)
                        match = &s;
                const std::string shown = fmt::format("-{}", c);
                if (!match)
                    throw config_error(where, unknown(shown, specs));
                if (match->flag) {
                    set_flag(*match, shown, true, where);
                    continue;
                }
                const std::string rest = a.substr(j + 1);
                set_value(*match, shown, rest.empty() ? next_value(shown) : rest, where);
                break;
            }
            continue;
        }

        if (positional) {
            positional->push_back(a);
            continue;
        }
        throw config_error(where, fmt::format("unexpected argument '{}' (accepted: {})", a,
                                              options_summary(specs)));
    }
}

} // namespace schedlab
