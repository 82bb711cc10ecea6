// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * User errors: bad flags, unknown names, malformed files, impossible
 * topologies. Thrown only while an experiment is being built, never from
 * inside a running simulation; the CLI turns them into a message and a
 * non-zero exit code. `where` names the input (a flag, a file:line, a preset).
 */
#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace schedlab {

class config_error : public std::runtime_error {
public:
    config_error(std::string where, const std::string& what)
        : std::runtime_error(where.empty() ? what : where + ": " + what), where_(std::move(where))
    {
    }
    const std::string& where() const { return where_; }

private:
    std::string where_;
};

/// Closest candidate by edit distance, for "did you mean" hints; empty if none is close.
std::string nearest_name(const std::string& token, const std::vector<std::string>& candidates);

} // namespace schedlab
