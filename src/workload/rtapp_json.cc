// SPDX-License-Identifier: GPL-2.0-only
/*
 * rt-app's JSON dialect: see rtapp_json.h.
 */
#include "workload/rtapp_json.h"

#include "sim/config_error.h"
#include "sim/file_io.h"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

namespace schedlab {

const rtj_member* rtj_value::find(const std::string& key) const
{
    for (const rtj_member& m : members)
        if (m.key == key)
            return &m;
    return nullptr;
}

const char* rtj_value::kind_name() const
{
    switch (kind) {
    case null: return "null";
    case boolean: return "a boolean";
    case number: return "a number";
    case string: return "a string";
    case array: return "an array";
    case object: return "an object";
    }
    return "?";
}

namespace {

class reader {
public:
    reader(const std::string& text, const std::string& file) : s_(text), file_(file) {}

    std::shared_ptr<rtj_value> document()
    {
        skip();
        auto v = value();
        skip();
        if (pos_ < s_.size())
            fail("unexpected text after the top-level value");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& what) const
    {
        throw config_error(fmt::format("{}:{}:{}", file_, line_, col_), what);
    }

    char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
    bool at_end() const { return pos_ >= s_.size(); }
    void advance()
    {
        if (s_[pos_] == '\n') {
            ++line_;
            col_ = 1;
        } else {
            ++col_;
        }
        ++pos_;
    }

    /// Whitespace and comments.
    void skip()
    {
        for (;;) {
            while (!at_end() && std::strchr(" \t\r\n", peek()))
                advance();
            if (peek() == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '*') {
                const int l = line_;
                const int c = col_;
                advance();
                advance();
                while (!at_end() && !(peek() == '*' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '/'))
                    advance();
                if (at_end()) {
                    line_ = l;
                    col_ = c;
                    fail("unterminated /* comment");
                }
                advance();
                advance();
                continue;
            }
            if (peek() == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '/') {
                while (!at_end() && peek() != '\n')
                    advance();
                continue;
            }
            return;
        }
    }

    std::shared_ptr<rtj_value> make(rtj_value::kind_t k)
    {
        auto v = std::make_shared<rtj_value>();
        v->kind = k;
        v->line = line_;
        v->col = col_;
        return v;
    }

    std::shared_ptr<rtj_value> value()
    {
        if (at_end())
            fail("unexpected end of file, expected a value");
        const char c = peek();
        if (c == '{')
            return object();
        if (c == '[')
            return array();
        if (c == '"') {
            auto v = make(rtj_value::string);
            v->str = string_lit();
            return v;
        }
        if (c == '-' || (c >= '0' && c <= '9'))
            return number();
        if (std::isalpha(static_cast<unsigned char>(c))) {
            auto v = make(rtj_value::null);
            std::string word;
            while (!at_end() && std::isalnum(static_cast<unsigned char>(peek()))) {
                word += peek();
                advance();
            }
            if (word == "true" || word == "false") {
                v->kind = rtj_value::boolean;
                v->b = word == "true";
            } else if (word != "null") {
                col_ -= static_cast<int>(word.size());
                fail(fmt::format("unexpected word '{}' (strings need double quotes)", word));
            }
            return v;
        }
        fail(fmt::format("unexpected character '{}'", c));
    }

    std::string string_lit()
    {
        advance(); // "
        std::string out;
        for (;;) {
            if (at_end() || peek() == '\n')
                fail("unterminated string");
            const char c = peek();
            advance();
            if (c == '"')
                return out;
            if (c != '\\') {
                out += c;
                continue;
            }
            if (at_end())
                fail("unterminated string");
            const char e = peek();
            advance();
            switch (e) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                unsigned cp = 0;
                for (int i = 0; i < 4; ++i) {
                    const char h = peek();
                    if (!std::isxdigit(static_cast<unsigned char>(h)))
                        fail("bad \\u escape");
                    cp = cp * 16 + static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(h))
                                                             ? h - '0'
                                                             : (std::tolower(h) - 'a' + 10));
                    advance();
                }
                // Names in rt-app files are ASCII; keep other code points as UTF-8.
                if (cp < 0x80) {
                    out += static_cast<char>(cp);
                } else if (cp < 0x800) {
                    out += static_cast<char>(0xC0 | (cp >> 6));
                    out += static_cast<char>(0x80 | (cp & 0x3F));
                } else {
                    out += static_cast<char>(0xE0 | (cp >> 12));
                    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
                    out += static_cast<char>(0x80 | (cp & 0x3F));
                }
                break;
            }
            default: fail(fmt::format("bad escape '\\{}'", e));
            }
        }
    }

    std::shared_ptr<rtj_value> number()
    {
        auto v = make(rtj_value::number);
        const std::size_t start = pos_;
        if (peek() == '-')
            advance();
        bool integral = true;
        while (!at_end() && (std::isdigit(static_cast<unsigned char>(peek())) ||
                             std::strchr(".eE+-", peek()))) {
            if (std::strchr(".eE", peek()))
                integral = false;
            advance();
        }
        const std::string text = s_.substr(start, pos_ - start);
        char* end = nullptr;
        errno = 0;
        v->num = std::strtod(text.c_str(), &end);
        if (text.empty() || text == "-" || end != text.c_str() + text.size() || errno == ERANGE) {
            line_ = v->line;
            col_ = v->col;
            fail(fmt::format("malformed number '{}'", text));
        }
        if (integral) {
            const auto res = std::from_chars(text.data(), text.data() + text.size(), v->integer);
            v->is_integer = res.ec == std::errc();
        }
        return v;
    }

    /// Arrays and objects nest at most max_depth deep (the reader recurses).
    struct nesting {
        explicit nesting(reader& r) : r_(r)
        {
            if (++r_.depth_ > rtj_max_depth)
                r_.fail(fmt::format("nested more than {} levels deep", rtj_max_depth));
        }
        ~nesting() { --r_.depth_; }
        reader& r_;
    };

    std::shared_ptr<rtj_value> array()
    {
        const nesting guard(*this);
        auto v = make(rtj_value::array);
        advance(); // [
        for (;;) {
            skip();
            if (peek() == ']') {
                advance();
                return v;
            }
            v->items.push_back(value());
            skip();
            if (peek() == ',') {
                advance();
                continue; // a trailing comma before ']' is accepted
            }
            if (peek() == ']') {
                advance();
                return v;
            }
            fail(at_end() ? "unexpected end of file in an array" : "expected ',' or ']' in an array");
        }
    }

    std::shared_ptr<rtj_value> object()
    {
        const nesting guard(*this);
        auto v = make(rtj_value::object);
        advance(); // {
        for (;;) {
            skip();
            if (peek() == '}') {
                advance();
                return v;
            }
            if (peek() != '"')
                fail(at_end() ? "unexpected end of file in an object"
                              : "expected a \"key\" (double-quoted) or '}'");
            rtj_member m;
            m.line = line_;
            m.col = col_;
            m.key = string_lit();
            skip();
            if (peek() == ':') {
                advance();
                skip();
                m.value = value();
            } else if (peek() == ',' || peek() == '}') {
                // workgen's bare key ("suspend",): a member without a value.
                m.bare = true;
                m.value = std::make_shared<rtj_value>();
                m.value->line = m.line;
                m.value->col = m.col;
            } else {
                fail(fmt::format("expected ':' after the key \"{}\"", m.key));
            }
            v->members.push_back(std::move(m));
            skip();
            if (peek() == ',') {
                advance();
                continue; // a trailing comma before '}' is accepted
            }
            if (peek() == '}') {
                advance();
                return v;
            }
            fail(at_end() ? "unexpected end of file in an object" : "expected ',' or '}' in an object");
        }
    }

    const std::string& s_;
    const std::string& file_;
    std::size_t pos_ = 0;
    int line_ = 1;
    int col_ = 1;
    int depth_ = 0;
};

} // namespace

std::shared_ptr<rtj_value> rtj_parse(const std::string& text, const std::string& file)
{
    return reader(text, file).document();
}

std::shared_ptr<rtj_value> rtj_parse_file(const std::string& path)
{
    return rtj_parse(read_input_file(path, path, rtj_max_file_bytes, "rt-app file"), path);
}

} // namespace schedlab
