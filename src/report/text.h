// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The comparison as the text tables scheduler developers paste to LKML
 * (docs/compare.md, "The tables"): mmtests compare-kernels, AMD's
 * "norm [pct imp](CV)" blocks and Intel lkp's "%stddev %change %stddev".
 * Formatting only: every number comes from analysis/compare.h.
 */
#include "analysis/compare.h"

#include <string>
#include <vector>

namespace schedlab {

std::string render_mmtests(const comparison& c);
std::string render_amd(const comparison& c);
std::string render_lkp(const comparison& c);
/// The schedstat differences, one table per (idle type, counter); "" when the runs had none.
std::string render_schedstat(const comparison& c);
/// A few "# " lines: machine, arms with their feature deltas, runs, seeds, schedlab version.
/// `significance`: say which mmtests rule stars the rows (only when the mmtests table is shown).
std::string render_provenance(const comparison& c, bool significance = true);

/// mmtests' two header lines for a kernel name: up to the first '-' (keeping
/// "-rcN" on the first line), else up to the first '+'; and the rest.
std::pair<std::string, std::string> mmtests_split_name(const std::string& name);

/*
 * One lkp row: per kernel the mean (10 wide: %.2f below 1000, an integer up
 * to 1e8, %.4g above) and " +-NN%" when the relative stddev exceeds 2 %;
 * between kernels %+.1f%% (absolute %+.1f for keys ending in '%' or starting
 * with "perf-profile"); then two spaces and the key.
 */
std::string lkp_row(const std::vector<double>& avgs, const std::vector<double>& stddev_pcts,
                    const std::vector<double>& changes, const std::string& key);

} // namespace schedlab
