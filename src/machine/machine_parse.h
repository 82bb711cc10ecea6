// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Machine descriptions from outside: JSON machine files (format
 * "schedlab-machine-v1", see docs/machine-format.md), `lscpu -p` output and
 * a sysfs tree. Every error is a config_error naming the input and the place
 * in it (file:line:col, a JSON field path, or a sysfs file).
 */
#include "machine/machine.h"

#include <string>
#include <string_view>
#include <vector>

namespace schedlab {

inline constexpr const char* machine_format_v1 = "schedlab-machine-v1";
/// Input bounds: a machine file's size (an 8192-CPU machine in the "cpus" form or as lscpu -p
/// is under 1 MiB) and its JSON nesting (the format nests 3 deep).
inline constexpr std::size_t max_machine_file_bytes = std::size_t{16} << 20;
inline constexpr int max_machine_json_depth = 32;

/// Parses a JSON machine file; `where` is its name, used in every error.
machine machine_from_json(std::string_view text, const std::string& where);

/// The explicit ("cpus") form of the machine, one CPU per line; machine_from_json reads it back.
std::string machine_to_json(const machine& m);

/// Parses `lscpu -p` / `lscpu -p=CPU,CORE,SOCKET,NODE,CACHE` output; errors name where:line.
machine machine_from_lscpu(std::string_view text, const std::string& where);

/// True if `text` looks like `lscpu -p` output (its comment header).
bool looks_like_lscpu(std::string_view text);

/// Reads a sysfs tree (the real one by default, or a copy for tests).
machine machine_from_sysfs(const std::string& cpu_root = "/sys/devices/system/cpu",
                           const std::string& node_root = "/sys/devices/system/node");

/// Parses the kernel's cpulist form "0-3,8,10-11" (as in sysfs *_list files).
std::vector<int> parse_cpulist(std::string_view list, const std::string& where);

} // namespace schedlab
