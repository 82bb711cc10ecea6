// SPDX-License-Identifier: GPL-2.0-only
#include "sim/file_io.h"

#include "sim/config_error.h"

#include <fmt/format.h>

#include <cerrno>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>
#include <utility>

namespace schedlab {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t write_chunk = 1 << 20;

std::string errno_text(int err)
{
    return std::generic_category().message(err);
}

/// Paths in the kernel's pseudo filesystems (/dev/stdout, /proc/self/fd/1) are never replaced.
bool pseudo_path(const std::string& p)
{
    return p.starts_with("/dev/") || p.starts_with("/proc/");
}

} // namespace

output_file::output_file(std::string path, std::string flag)
    : path_(std::move(path)), flag_(std::move(flag))
{
    if (path_.empty())
        throw config_error(flag_, "needs a file name");
    struct stat st {};
    const bool exists = ::stat(path_.c_str(), &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        throw config_error(flag_, fmt::format("'{}' is a directory; give a file name", path_));
    if (exists && (!S_ISREG(st.st_mode) || pseudo_path(path_))) {
        // A device, FIFO or the shell's stdout: written in place, as a stream.
        in_place_ = true;
        fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC | (S_ISREG(st.st_mode) ? O_APPEND : 0));
        if (fd_ < 0)
            fail("cannot open", errno);
        return;
    }
    std::error_code ec;
    // Replace the file a symlink points to, not the symlink.
    const fs::path target = exists ? fs::canonical(path_, ec) : fs::absolute(path_, ec);
    if (ec)
        throw config_error(flag_, fmt::format("cannot write '{}': {}", path_, ec.message()));
    const fs::path dir = target.parent_path();
    struct stat dst {};
    if (::stat(dir.c_str(), &dst) != 0 || !S_ISDIR(dst.st_mode))
        throw config_error(flag_,
                           fmt::format("cannot write '{}': the directory '{}' does not exist",
                                       path_, dir.string()));
    if (exists && ::access(target.c_str(), W_OK) != 0)
        fail("cannot write", errno);
    const mode_t mode = exists ? (st.st_mode & 07777) : 0666;
    if (::access("/proc/self/fd", X_OK) == 0)
        fd_ = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
    if (fd_ >= 0) {
        unnamed_ = true;
    } else {
        // No O_TMPFILE here (or no /proc to link it through): a named temporary beside the target.
        std::string tmpl = (dir / fmt::format(".{}.XXXXXX", target.filename().string())).string();
        fd_ = ::mkstemp(tmpl.data());
        if (fd_ < 0)
            fail("cannot write", errno);
        tmp_path_ = tmpl;
        ::fchmod(fd_, exists ? mode : 0644);
    }
    target_ = target.string();
}

output_file::output_file(output_file&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), in_place_(o.in_place_), unnamed_(o.unnamed_),
      path_(std::move(o.path_)), flag_(std::move(o.flag_)), target_(std::move(o.target_)),
      tmp_path_(std::move(o.tmp_path_)), buf_(std::move(o.buf_))
{
    o.tmp_path_.clear();
}

output_file& output_file::operator=(output_file&& o) noexcept
{
    if (this != &o) {
        discard();
        fd_ = std::exchange(o.fd_, -1);
        in_place_ = o.in_place_;
        unnamed_ = o.unnamed_;
        path_ = std::move(o.path_);
        flag_ = std::move(o.flag_);
        target_ = std::move(o.target_);
        tmp_path_ = std::move(o.tmp_path_);
        o.tmp_path_.clear();
        buf_ = std::move(o.buf_);
    }
    return *this;
}

output_file::~output_file()
{
    discard();
}

void output_file::discard() noexcept
{
    if (fd_ >= 0)
        ::close(fd_);
    fd_ = -1;
    if (!tmp_path_.empty())
        ::unlink(tmp_path_.c_str());
    tmp_path_.clear();
    buf_.clear();
}

void output_file::fail(const std::string& what, int err) const
{
    throw config_error(flag_, fmt::format("{} '{}': {}", what, path_, errno_text(err)));
}

void output_file::write(std::string_view data)
{
    if (fd_ < 0)
        throw config_error(flag_, fmt::format("'{}' is not open for writing", path_));
    buf_.append(data);
    if (buf_.size() >= write_chunk)
        flush_buffer();
}

void output_file::flush_buffer()
{
    std::size_t done = 0;
    while (done < buf_.size()) {
        const ssize_t n = ::write(fd_, buf_.data() + done, buf_.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            fail("cannot write", n < 0 ? errno : EIO);
        done += static_cast<std::size_t>(n);
    }
    buf_.clear();
}

void output_file::commit()
{
    if (fd_ < 0)
        throw config_error(flag_, fmt::format("'{}' is not open for writing", path_));
    flush_buffer();
    if (in_place_) {
        const int fd = std::exchange(fd_, -1);
        if (::close(fd) != 0 && errno != EINTR)
            fail("cannot write", errno);
        return;
    }
    if (::fsync(fd_) != 0)
        fail("cannot write", errno);
    const fs::path target(target_);
    const fs::path dir = target.parent_path();
    if (unnamed_) {
        // Give the unnamed file a temporary name, then rename it over the target (linkat
        // cannot replace an existing file).
        const std::string proc = fmt::format("/proc/self/fd/{}", fd_);
        for (int attempt = 0;; ++attempt) {
            const std::string name =
                (dir / fmt::format(".{}.{}-{}", target.filename().string(), ::getpid(), attempt))
                    .string();
            if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
                tmp_path_ = name;
                break;
            }
            if (errno != EEXIST || attempt > 100)
                fail("cannot write", errno);
        }
    }
    if (::rename(tmp_path_.c_str(), target_.c_str()) != 0)
        fail("cannot write", errno);
    tmp_path_.clear();
    const int fd = std::exchange(fd_, -1);
    ::close(fd);
    // Make the rename itself durable.
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
}

void write_output_file(const std::string& path, std::string_view contents, const std::string& flag)
{
    output_file f(path, flag);
    f.write(contents);
    f.commit();
}

double memory_budget_bytes()
{
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) / 2 : 0;
}

void check_memory_estimate(double bytes, const std::string& what, const std::string& where)
{
    const double budget = memory_budget_bytes();
    if (budget > 0 && bytes > budget)
        throw config_error(where, fmt::format("{} need about {}, more than half of this "
                                              "machine's memory ({}), the most a run may take",
                                              what, format_bytes(bytes), format_bytes(budget)));
}

std::string format_bytes(double bytes)
{
    static const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (bytes >= 1024 && u < 5) {
        bytes /= 1024;
        ++u;
    }
    if (u == 0)
        return fmt::format("{:.0f} bytes", bytes);
    return bytes < 10 && bytes != static_cast<double>(static_cast<long long>(bytes))
               ? fmt::format("{:.1f} {}", bytes, units[u])
               : fmt::format("{:.0f} {}", bytes, units[u]);
}

std::string read_input_file(const std::string& path, const std::string& where,
                            std::size_t max_bytes, const std::string& what)
{
    // "FILE: cannot open the result file: ..." when the file is the `where`.
    const std::string named = where == path ? what : fmt::format("{} '{}'", what, path);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw config_error(where, fmt::format("cannot open the {}: {}", named, errno_text(errno)));
    struct closer {
        int fd;
        ~closer() { ::close(fd); }
    } close_it{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        throw config_error(where, fmt::format("cannot read the {}: {}", named, errno_text(errno)));
    if (S_ISDIR(st.st_mode))
        throw config_error(where, fmt::format("'{}' is a directory, not a {}", path, what));
    auto too_big = [&](const std::string& size) {
        return config_error(where, fmt::format("the {} is {}larger than the {} limit", named, size,
                                               format_bytes(static_cast<double>(max_bytes))));
    };
    if (S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) > max_bytes)
        throw too_big(format_bytes(static_cast<double>(st.st_size)) + ", ");
    std::string out;
    if (S_ISREG(st.st_mode))
        out.reserve(static_cast<std::size_t>(st.st_size));
    char chunk[65536];
    while (true) {
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw config_error(where,
                               fmt::format("cannot read the {}: {}", named, errno_text(errno)));
        if (n == 0)
            break;
        if (out.size() + static_cast<std::size_t>(n) > max_bytes)
            throw too_big("");
        out.append(chunk, static_cast<std::size_t>(n));
    }
    return out;
}

void check_json_depth(std::string_view text, int max_depth, const std::string& where)
{
    int depth = 0, line = 1, col = 0;
    bool in_string = false, escaped = false;
    for (const char ch : text) {
        ++col;
        if (ch == '\n') {
            ++line;
            col = 0;
        }
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (ch == '\\')
                escaped = true;
            else if (ch == '"')
                in_string = false;
            continue;
        }
        if (ch == '"') {
            in_string = true;
        } else if (ch == '[' || ch == '{') {
            if (++depth > max_depth)
                throw config_error(fmt::format("{}:{}:{}", where, line, col),
                                   fmt::format("nested more than {} levels deep", max_depth));
        } else if ((ch == ']' || ch == '}') && depth > 0) {
            --depth;
        }
    }
}

} // namespace schedlab
