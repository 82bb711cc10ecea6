// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Helpers shared by the test binaries of every layer (header-only; tests only).
 */
#include "sim/config_error.h"

#include <string>
#include <utility>

namespace schedlab::test_support {

/// The message of the config_error that f() throws, or `none` when it throws none.
template <typename F> std::string error_of(F&& f, std::string none = "")
{
    try {
        std::forward<F>(f)();
    } catch (const config_error& e) {
        return e.what();
    }
    return none;
}

} // namespace schedlab::test_support
