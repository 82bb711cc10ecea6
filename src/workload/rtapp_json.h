// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * A JSON reader for rt-app's dialect (rt-app's
 * doc/tutorial.txt): standard JSON plus
 * - C comments: slash-star ... star-slash and //-to-end-of-line;
 * - trailing commas before '}' and ']';
 * - duplicate keys in one object, kept in file order (rt-app's examples rely
 *   on it: several "run" events in one phase; workgen renames them);
 * - a bare key with no value in an object (`"suspend",`), which workgen
 *   fills in: kept as a null member with `bare` set.
 * Anything else is an error naming file:line:col. nlohmann::json cannot
 * keep duplicates or order, hence this small reader.
 */
#include "sim/time.h"

#include <memory>
#include <string>
#include <vector>

namespace schedlab {

struct rtj_value;

/// One "key": value member of an object, with where the key is.
struct rtj_member {
    std::string key;
    std::shared_ptr<rtj_value> value;
    int line = 0;
    int col = 0;
    bool bare = false; ///< the key had no value
};

struct rtj_value {
    enum kind_t : u8 { null, boolean, number, string, array, object } kind = null;
    bool b = false;
    double num = 0;
    bool is_integer = false;
    long long integer = 0;
    std::string str;
    std::vector<std::shared_ptr<rtj_value>> items; ///< array
    std::vector<rtj_member> members;               ///< object, in file order
    int line = 0;
    int col = 0;

    /// The first member called `key`, or null.
    const rtj_member* find(const std::string& key) const;
    const char* kind_name() const;
};

/// Input bounds: rt-app files nest 4 deep (tasks, phases, events, resources); the examples
/// shipped with rt-app are a few KiB.
inline constexpr int rtj_max_depth = 64;
inline constexpr std::size_t rtj_max_file_bytes = std::size_t{16} << 20;

/// Parses `text`; `file` names it in errors ("file:line:col: ...").
std::shared_ptr<rtj_value> rtj_parse(const std::string& text, const std::string& file);
/// Reads and parses a file; a missing file is a config_error naming it.
std::shared_ptr<rtj_value> rtj_parse_file(const std::string& path);

} // namespace schedlab
