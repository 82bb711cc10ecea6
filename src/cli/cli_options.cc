// SPDX-License-Identifier: GPL-2.0-only
#include "cli/cli_options.h"

#include <fmt/format.h>

#include <exception>

namespace schedlab {

CLI::Validator number_in(double lo, double hi, bool lo_open, const std::string& unit)
{
    const std::string range =
        fmt::format("{}{}, {}]{}", lo_open ? "(" : "[", lo, hi, unit.empty() ? "" : " " + unit);
    return CLI::Validator(
        [=](std::string& value) -> std::string {
            double v = 0;
            try {
                std::size_t used = 0;
                v = std::stod(value, &used);
                if (used != value.size())
                    return fmt::format("'{}' is not a number", value);
            } catch (const std::exception&) {
                return fmt::format("'{}' is not a number", value);
            }
            if (!(lo_open ? v > lo : v >= lo) || !(v <= hi)) // NaN fails both
                return fmt::format("{} is outside {}", value, range);
            return "";
        },
        "in " + range);
}

void add_input_options(CLI::App* cmd, std::vector<std::string>& files, const std::string& what,
                       std::vector<std::string>& experiments, const std::string& which)
{
    cmd->add_option("inputs", files, what);
    cmd->add_option("-e,--experiment", experiments, "Only these experiments of the store" + which)
        ->allow_extra_args(false);
}

} // namespace schedlab
