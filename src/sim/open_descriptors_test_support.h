// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The number of this process's open file descriptors (tests and fuzz targets only), for
 * checking that a reader closed what it opened: the entries of /proc/self/fd, the directory's
 * own descriptor included (the same each time); 0 where /proc cannot be read.
 */
#include <dirent.h>

namespace schedlab::test_support {

inline int open_descriptors()
{
    int n = 0;
    if (DIR* d = opendir("/proc/self/fd")) {
        while (readdir(d))
            ++n;
        closedir(d);
    }
    return n;
}

} // namespace schedlab::test_support
