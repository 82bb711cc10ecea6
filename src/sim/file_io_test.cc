// SPDX-License-Identifier: GPL-2.0-only
#include "sim/file_io.h"

#include "sim/scratch_dir_test_support.h"
#include "sim/test_support.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace schedlab {
namespace {

namespace fs = std::filesystem;
using test_support::error_of;
using ::testing::HasSubstr;

using file_io = test_support::scratch_dir;

TEST_F(file_io, the_target_changes_only_at_commit)
{
    const std::string p = path("out.json");
    write_output_file(p, "old\n", "--json");
    {
        output_file f(p, "--json");
        f.write("new contents, ");
        f.write(std::string(3 << 20, 'x')); // past the write buffer: really written
        EXPECT_EQ(slurp(p), "old\n");
        f.commit();
    }
    EXPECT_EQ(slurp(p).substr(0, 14), "new contents, ");
    EXPECT_EQ(slurp(p).size(), 14u + (3u << 20));
    EXPECT_EQ(entries(), 1u); // no temporary left beside it
}

TEST_F(file_io, an_uncommitted_file_leaves_the_target_as_it_was)
{
    const std::string p = path("out.json");
    write_output_file(p, "old\n", "--json");
    {
        output_file f(p, "--json");
        f.write(std::string(2 << 20, 'y'));
    } // e.g. an exception between opening and committing
    EXPECT_EQ(slurp(p), "old\n");
    EXPECT_EQ(entries(), 1u);
    {
        output_file f(path("new.json"), "--json");
        f.write("partial");
    }
    EXPECT_FALSE(fs::exists(path("new.json")));
    EXPECT_EQ(entries(), 1u);
}

TEST_F(file_io, bad_paths_are_errors_when_opened_naming_the_flag)
{
    EXPECT_THAT(error_of([&] { output_file f(dir_.string(), "--json"); }),
                HasSubstr("--json: '" + dir_.string() + "' is a directory"));
    EXPECT_THAT(
        error_of([&] { output_file f(path("no/such/dir/x.html"), "--html"); }),
        HasSubstr("--html: cannot write '" + path("no/such/dir/x.html") + "': the directory"));
    EXPECT_THAT(error_of([&] { output_file f("", "--trace"); }),
                HasSubstr("--trace: needs a file name"));
}

TEST_F(file_io, write_errors_are_reported)
{
    // /dev/full is a device: written in place, and every write fails with ENOSPC.
    EXPECT_THAT(error_of([&] {
                    output_file f("/dev/full", "--explain");
                    f.write("a decision\n");
                    f.commit();
                }),
                HasSubstr("--explain: cannot write '/dev/full': No space left on device"));
    EXPECT_TRUE(fs::is_character_file("/dev/full"));
}

TEST_F(file_io, a_symlink_is_followed_not_replaced)
{
    write_output_file(path("real.txt"), "old", "-o");
    fs::create_symlink(path("real.txt"), path("link.txt"));
    write_output_file(path("link.txt"), "new", "-o");
    EXPECT_TRUE(fs::is_symlink(path("link.txt")));
    EXPECT_EQ(slurp(path("real.txt")), "new");
}

TEST_F(file_io, inputs_are_read_whole_up_to_their_limit)
{
    write_output_file(path("in.json"), "0123456789", "-o");
    EXPECT_EQ(read_input_file(path("in.json"), "--machine", 10), "0123456789");
    EXPECT_THAT(error_of([&] { read_input_file(path("in.json"), "--machine", 9, "machine file"); }),
                HasSubstr("--machine: the machine file '" + path("in.json") +
                          "' is 10 bytes, larger than the 9 bytes limit"));
    // An endless stream is refused at the limit, not read until memory runs out.
    EXPECT_THAT(error_of([&] { read_input_file("/dev/zero", "rt-app", 1 << 20); }),
                HasSubstr("rt-app: the file '/dev/zero' is larger than the 1 MiB limit"));
    EXPECT_THAT(error_of([&] { read_input_file(dir_.string(), "rt-app", 100); }),
                HasSubstr("is a directory, not a file"));
    EXPECT_THAT(
        error_of([&] { read_input_file(path("missing"), "x.json", 100); }),
        HasSubstr("cannot open the file '" + path("missing") + "': No such file or directory"));
}

TEST(check_json_depth, counts_brackets_outside_strings_without_recursion)
{
    EXPECT_NO_THROW(check_json_depth(R"({"a": [[1], {"b": "[[[[[[[[["}]})", 3, "f.json"));
    EXPECT_EQ(error_of([] { check_json_depth("{\"a\":\n [[[]]]}", 3, "f.json"); }),
              "f.json:2:4: nested more than 3 levels deep");
    const std::string deep = std::string(1'000'000, '[') + std::string(1'000'000, ']');
    EXPECT_EQ(error_of([&] { check_json_depth(deep, 64, "d.json"); }),
              "d.json:1:65: nested more than 64 levels deep");
    EXPECT_NO_THROW(check_json_depth(R"(["\"[[[["])", 1, "f.json")); // an escaped quote
}

TEST(format_bytes, picks_a_unit)
{
    EXPECT_EQ(format_bytes(100), "100 bytes");
    EXPECT_EQ(format_bytes(16 << 20), "16 MiB");
    EXPECT_EQ(format_bytes(1.5 * (1 << 30)), "1.5 GiB");
}

TEST(check_memory_estimate, refuses_what_cannot_fit_with_the_estimate_and_the_limit)
{
    ASSERT_GT(memory_budget_bytes(), 0);
    EXPECT_NO_THROW(check_memory_estimate(1 << 20, "a small thing", "x"));
    const std::string e = error_of([] { check_memory_estimate(1e18, "a huge thing", "x"); });
    EXPECT_THAT(e, HasSubstr("x: a huge thing need about 888 PiB, more than half of this "
                             "machine's memory ("));
}
} // namespace
} // namespace schedlab
