// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The fidelity report as text (`schedlab fidelity`): per published table our
 * AMD cells above the published ones, row by row, each scored cell marked,
 * the sign agreement per table and overall, and the tbench newly-idle
 * lb_count table. Formatting only: every number comes from analysis/fidelity.h.
 */
#include "analysis/fidelity.h"

#include <string>

namespace schedlab {

/// "sign agreement: A of N rows (P%), W within a factor of 2".
std::string render_fidelity_count(const fidelity_count& c);

/// One table: a header naming both sides, two lines per row ("ours", "AMD"), the agreement.
std::string render_fidelity_table(const fidelity_table& t, double threshold);

/// The newly-idle lb_count per domain level and load, both sides with ratio with/without.
std::string render_newidle(const fidelity_report& r);

/// The whole report: notes, every table, the newidle table, the score per table and overall.
std::string render_fidelity(const fidelity_report& r);

} // namespace schedlab
