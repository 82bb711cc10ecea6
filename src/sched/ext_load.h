// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The ext policies a kernel spec can name (ext_load.cc): the built-in ones and
 * shared objects built against include/schedlab/ext_policy.h.
 */
#include "sched/ext.h"

#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace schedlab {

struct ext_builtin_policy {
    const char* name;
    const char* description;
    const schedlab_ext_ops* ops;
};

extern const schedlab_ext_ops ext_simple_ops;      ///< ext_simple.cc
extern const schedlab_ext_ops ext_simple_fifo_ops; ///< ext_simple.cc
extern const schedlab_ext_ops ext_llc_ops;         ///< ext_llc.cc

std::span<const ext_builtin_policy> ext_builtin_policies();

/// The largest policy shared object read (it is read whole, to put its SHA-256 in the run's
/// identity): 64 MiB, over 4000 times the examples/ext_policy objects (about 15 KiB each).
/// A larger file, a directory or a device (ext:/dev/zero) is refused naming it.
inline constexpr std::size_t max_ext_policy_bytes = std::size_t{64} << 20;

/// The policy `name` names (a built-in's name, or a path to a shared object), checked
/// as scx_ops_enable() would. Throws config_error naming `where` if it cannot be run.
std::shared_ptr<const ext_policy_handle> load_ext_policy(const std::string& name,
                                                         const std::string& where);

} // namespace schedlab
