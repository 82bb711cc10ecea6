// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Files built into the binary at build time (cmake/SchedlabAssets.cmake): the HTML report's
 * chart libraries from npm, so an installed schedlab needs no node_modules. A library that
 * embeds assets defines embedded_assets() (generated); find_asset() looks one up by its path
 * relative to where it came from, e.g. "vega/build/vega.min.js".
 */
#include <cstddef>
#include <span>
#include <string_view>

namespace schedlab {

struct embedded_asset {
    std::string_view name;
    std::string_view bytes;
};

/// Every embedded asset (defined by the generated source of the library that embeds them).
std::span<const embedded_asset> embedded_assets();

/// The asset called `name`, or nullptr.
inline const embedded_asset* find_asset(std::string_view name)
{
    for (const embedded_asset& a : embedded_assets())
        if (a.name == name)
            return &a;
    return nullptr;
}

} // namespace schedlab
