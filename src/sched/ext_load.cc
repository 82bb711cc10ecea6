// SPDX-License-Identifier: GPL-2.0-only
/*
 * model: the ext policies a kernel spec names ("6.12+ext:simple",
 * "6.12+ext:./my_policy.so"): a built-in one by name (ext_simple.cc,
 * ext_llc.cc), or a shared object's, dlopen()ed and asked for its table
 * through schedlab_ext_policy() (include/schedlab/ext_policy.h). The kernel's
 * counterpart is the BPF struct_ops attach and scx_ops_enable()'s checks
 * (validate_ops()): a table that cannot be run is refused here, naming the
 * flag, before any simulation starts.
 */
#include "sched/ext_load.h"

#include <fmt/format.h>

#include "sim/config_error.h"
#include "sim/file_io.h"
#include "sim/sha256.h"

#include <dlfcn.h>

#include <algorithm>

namespace schedlab {

namespace {

/* The built-in policies: one file each and one line here. */
const ext_builtin_policy builtins[] = {
    {"simple", "scx_simple's default: one shared DSQ in weighted vtime order", &ext_simple_ops},
    {"simple_fifo", "scx_simple -f: one shared FIFO DSQ", &ext_simple_fifo_ops},
    {"llc", "a FIFO DSQ per LLC; idle CPUs of the LLC kicked, then stealing nearest-LLC-first",
     &ext_llc_ops},
};

// kernel: ext.c validate_ops() and scx_ops_enable()'s checks, 6.12 (the parts the ABI has).
void validate_ops(const schedlab_ext_ops& ops, const std::string& name, const std::string& where)
{
    auto bad = [&](const std::string& why) {
        throw config_error(where, fmt::format("ext policy '{}': {}", name, why));
    };
    if (ops.abi_version != SCHEDLAB_EXT_ABI_VERSION)
        bad(fmt::format("built for ABI version {}, schedlab runs version {}", ops.abi_version,
                        SCHEDLAB_EXT_ABI_VERSION));
    if (!ops.name || !*ops.name)
        bad("its ops table has no name");
    if (ops.flags != 0)
        bad(fmt::format("flags {:#x}: no SCX_OPS_* flag is modelled (give 0)", ops.flags));
    if (ops.timeout_ms > 30'000)
        bad(fmt::format("timeout_ms {} exceeds the watchdog's maximum, 30000 ms "
                        "(SCX_WATCHDOG_MAX_TIMEOUT)",
                        ops.timeout_ms));
    if (ops.state_size > (1u << 24))
        bad(fmt::format("state_size {} bytes: at most 16 MiB", ops.state_size));
}

bool is_path(const std::string& name)
{
    return name.find('/') != std::string::npos ||
           (name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0);
}

} // namespace

std::span<const ext_builtin_policy> ext_builtin_policies()
{
    return builtins;
}

std::shared_ptr<const ext_policy_handle> load_ext_policy(const std::string& name,
                                                         const std::string& where)
{
    auto h = std::make_shared<ext_policy_handle>();
    h->name = name;
    if (name.empty())
        throw config_error(where, "'ext:' names no policy; give ext:NAME (simple, simple_fifo, "
                                  "llc) or ext:./policy.so");
    if (!is_path(name)) {
        for (const ext_builtin_policy& b : builtins)
            if (name == b.name) {
                h->ops = b.ops;
                validate_ops(*h->ops, name, where);
                return h;
            }
        std::string names;
        for (const ext_builtin_policy& b : builtins)
            names += fmt::format("{}{}", names.empty() ? "" : ", ", b.name);
        throw config_error(where, fmt::format("unknown ext policy '{}': built-in ones are {}; a "
                                              "shared object is named by a path (./x.so)",
                                              name, names));
    }
    {
        // Read through read_input_file(): a directory or a device (ext:/tmp, ext:/dev/zero)
        // is refused by name instead of escaping as std::ios_failure or exhausting memory.
        std::string bytes;
        try {
            bytes = read_input_file(name, "", max_ext_policy_bytes, "shared object");
        } catch (const config_error& e) {
            throw config_error(where, fmt::format("cannot load ext policy '{}': {}", name,
                                                  e.what()));
        }
        h->sha256 = sha256_hex(bytes);
    }
    void* dl = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!dl)
        throw config_error(where, fmt::format("cannot load ext policy '{}': {}", name, dlerror()));
    h->dl = std::shared_ptr<void>(dl, [](void* d) { dlclose(d); });
    void* sym = dlsym(dl, SCHEDLAB_EXT_POLICY_SYMBOL);
    if (!sym)
        throw config_error(where, fmt::format("ext policy '{}' has no {}() (see "
                                              "include/schedlab/ext_policy.h)",
                                              name, SCHEDLAB_EXT_POLICY_SYMBOL));
    schedlab_ext_policy_fn fn;
    static_assert(sizeof(fn) == sizeof(sym));
    std::copy_n(reinterpret_cast<const char*>(&sym), sizeof(sym), reinterpret_cast<char*>(&fn));
    h->ops = fn(SCHEDLAB_EXT_ABI_VERSION);
    if (!h->ops)
        throw config_error(where, fmt::format("ext policy '{}': {}({}) returned no ops table", name,
                                              SCHEDLAB_EXT_POLICY_SYMBOL,
                                              SCHEDLAB_EXT_ABI_VERSION));
    validate_ops(*h->ops, name, where);
    return h;
}

} // namespace schedlab
