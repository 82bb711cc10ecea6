// SPDX-License-Identifier: GPL-2.0-only
#include "sim/config_error.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace schedlab {

namespace {
std::size_t edit_distance(const std::string& a, const std::string& b)
{
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                              std::tolower(static_cast<unsigned char>(b[j - 1]));
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}
} // namespace

std::string nearest_name(const std::string& token, const std::vector<std::string>& candidates)
{
    std::string best;
    std::size_t best_d = ~std::size_t{0};
    for (const auto& c : candidates) {
        const std::size_t d = edit_distance(token, c);
        if (d < best_d) {
            best_d = d;
            best = c;
        }
    }
    // Only suggest when the typo is small relative to the name.
    if (best.empty() || best_d > std::max<std::size_t>(2, token.size() / 3))
        return {};
    return best;
}

} // namespace schedlab
