// SPDX-License-Identifier: GPL-2.0-only
/*
 * A sysfs tree (/sys/devices/system/{cpu,node}) as a machine. The input is a
 * list of files, each "PATH\n" then its contents up to a NUL byte; PATH is
 * relative to a scratch root and must start with cpu/ or node/. Path
 * components keep only [a-z0-9_] so no input names a file outside the root.
 */
#include "fuzz_support.h"
#include "machine/machine_parse.h"

#include <filesystem>
#include <fstream>

namespace {

namespace fs = std::filesystem;

std::string clean_component(const std::string& c)
{
    std::string out;
    for (char ch : c)
        if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_')
            out += ch;
    return out.substr(0, 40);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace schedlab;
    // Emptied and refilled for each input; removed at exit (fuzz::scratch_dir).
    static const fuzz::scratch_dir scratch("sysfs");
    const fs::path& root = scratch.path;
    std::error_code ec;
    fs::remove_all(root, ec);
    fs::create_directories(root / "cpu", ec);
    fs::create_directories(root / "node", ec);

    const std::string text = fuzz::text_of(data, size);
    std::size_t pos = 0;
    for (int files = 0; pos < text.size() && files < 256; ++files) {
        const std::size_t nl = text.find('\n', pos);
        if (nl == std::string::npos)
            break;
        const std::size_t end = std::min(text.find('\0', nl + 1), text.size());
        fs::path rel;
        int depth = 0;
        std::size_t start = pos;
        while (start <= nl && depth < 6) {
            const std::size_t slash = std::min(text.find('/', start), nl);
            const std::string c = clean_component(text.substr(start, slash - start));
            if (!c.empty()) {
                rel /= c;
                ++depth;
            }
            start = slash + 1;
        }
        pos = end + 1;
        const std::string first = rel.empty() ? "" : rel.begin()->string();
        if (depth < 2 || (first != "cpu" && first != "node"))
            continue;
        fs::create_directories((root / rel).parent_path(), ec);
        if (fs::is_directory(root / rel, ec))
            continue;
        std::ofstream(root / rel, std::ios::binary) << text.substr(nl + 1, end - nl - 1);
    }
    fuzz::expect_clean(
        [&] { machine_from_sysfs((root / "cpu").string(), (root / "node").string()); });
    return 0;
}
