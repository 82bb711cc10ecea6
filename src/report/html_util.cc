// SPDX-License-Identifier: GPL-2.0-only
#include "report/html_util.h"

#include <cctype>

namespace schedlab {

std::string script_safe(const std::string& js)
{
    std::string out;
    out.reserve(js.size());
    for (std::size_t i = 0; i < js.size(); ++i) {
        out += js[i];
        if (js[i] == '<' && i + 7 < js.size() && js[i + 1] == '/') {
            std::string tag = js.substr(i + 2, 6);
            for (char& ch : tag)
                ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            if (tag == "script")
                out += '\\';
        }
    }
    return out;
}

std::string html_escape(const std::string& s)
{
    std::string out;
    for (char ch : s) {
        switch (ch) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        default: out += ch;
        }
    }
    return out;
}

} // namespace schedlab
