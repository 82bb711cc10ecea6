// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * SHA-256 (OpenSSL's libcrypto EVP): the results store's keys and a trace
 * file's content identity.
 */
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;

namespace schedlab {

/// An incremental SHA-256: update() with the bytes in order, then hex().
class sha256 {
public:
    sha256();
    ~sha256();
    sha256(const sha256&) = delete;
    sha256& operator=(const sha256&) = delete;

    void update(const void* data, std::size_t n);
    /// The digest of everything given, as 64 lowercase hex digits (once: it ends the hash).
    std::string hex();

private:
    evp_md_ctx_st* ctx_ = nullptr;
};

/// SHA-256 of `text`, as 64 lowercase hex digits.
std::string sha256_hex(std::string_view text);

} // namespace schedlab
