// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/// Escaping for the HTML report's pages (html.cc, timeline_html.cc).
#include <string>

namespace schedlab {

/*
 * Text inside <script>: a literal "</script" would end the element early.
 * "<\/script" means the same inside JS strings, regular expressions and JSON,
 * and nothing else is touched (a blanket "</" rewrite would break regex
 * literals such as /</g in the libraries).
 */
std::string script_safe(const std::string& js);

/// Text and attribute values: & < > " escaped.
std::string html_escape(const std::string& s);

} // namespace schedlab
