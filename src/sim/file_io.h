// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Files the user names: inputs read whole with a size cap, outputs written
 * atomically.
 *
 * An output_file is opened when the command starts, before any run, so an
 * unwritable path, a missing directory or a directory given as a file name is
 * an error before anything is simulated. It writes into an unnamed temporary
 * file in the target's directory (O_TMPFILE; a named ".NAME.XXXXXX" one where
 * the filesystem has no O_TMPFILE), and commit() flushes, fsyncs and renames
 * it over the target: a reader sees the old file or the whole new one, never
 * a half-written one, and an interrupted command leaves the target as it was.
 * A target that exists and is not a regular file (/dev/stdout, /dev/null, a
 * FIFO) is written in place. Every write error (ENOSPC, EIO, EFBIG) is a
 * config_error naming the flag and the path.
 */
#include <cstddef>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace schedlab {

class output_file {
public:
    output_file() = default; ///< no output: is_open() is false, writes are errors
    /// Opens (creates the temporary for) `path`; config_error(flag, ...) when it cannot be written.
    output_file(std::string path, std::string flag);
    output_file(output_file&& o) noexcept;
    output_file& operator=(output_file&& o) noexcept;
    output_file(const output_file&) = delete;
    output_file& operator=(const output_file&) = delete;
    /// An uncommitted file is discarded: the target keeps its old contents.
    ~output_file();

    bool is_open() const { return fd_ >= 0; }
    const std::string& path() const { return path_; }
    const std::string& flag() const { return flag_; }

    void write(std::string_view data);
    /// Flushes, fsyncs and renames the temporary over the target; the file is closed after.
    void commit();

private:
    void flush_buffer();
    [[noreturn]] void fail(const std::string& what, int err) const;
    void discard() noexcept;

    int fd_ = -1;
    bool in_place_ = false;   ///< not a regular file: written directly
    bool unnamed_ = false;    ///< O_TMPFILE: linked in at commit
    std::string path_, flag_; ///< as the user gave them, for messages
    std::string target_;      ///< what is replaced: the path with its symlinks resolved
    std::string tmp_path_;    ///< named temporary (fallback), "" otherwise
    std::string buf_;
};

/// Writes `contents` to `path` atomically (an output_file opened, written and committed).
void write_output_file(const std::string& path, std::string_view contents, const std::string& flag);

/// Reads the whole of `path` (a regular file, or a pipe such as /dev/stdin); config_error
/// naming `where` (the flag or the file) when it cannot be read, is a directory, or holds more
/// than `max_bytes` (refused before it is read past the limit).
std::string read_input_file(const std::string& path, const std::string& where,
                            std::size_t max_bytes, const std::string& what = "file");

/// A JSON text's nesting of arrays and objects, checked without recursion before it is parsed
/// (a recursive reader, or nlohmann's dump() of the value, would overflow the stack on
/// "[[[[..."): config_error("where:line:col", ...) at the first bracket past `max_depth`.
void check_json_depth(std::string_view text, int max_depth, const std::string& where);

/// A callback for nlohmann's `Json::parse(text, callback)` that refuses a key given twice in
/// one object, which nlohmann would keep the last of silently: it calls `on_repeat(key)`, which
/// must throw (a config_error naming the file and the key). Objects nest; each has its own keys.
template <class Json, class OnRepeat> auto refuse_repeated_keys(OnRepeat on_repeat)
{
    auto open = std::make_shared<std::vector<std::set<std::string>>>(); // one set per open object
    return [open, on_repeat](int, typename Json::parse_event_t ev, Json& parsed) {
        using event = typename Json::parse_event_t;
        if (ev == event::object_start) {
            open->emplace_back();
        } else if (ev == event::object_end) {
            if (!open->empty())
                open->pop_back();
        } else if (ev == event::key && !open->empty()) {
            std::string key = parsed.template get<std::string>();
            if (!open->back().insert(key).second)
                on_repeat(key);
        }
        return true;
    };
}

/// What one run may take: half of this machine's physical memory (0 if unknown).
double memory_budget_bytes();
/// config_error(where, ...) when `bytes` (the estimate for `what`) exceeds memory_budget_bytes():
/// refused before anything is allocated, with the estimate and the limit.
void check_memory_estimate(double bytes, const std::string& what, const std::string& where);

/// Sizes in the messages: "16 MiB", "1.5 GiB".
std::string format_bytes(double bytes);

} // namespace schedlab
