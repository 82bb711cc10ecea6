// SPDX-License-Identifier: GPL-2.0-only
#include "sim/sha256.h"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <stdexcept>

namespace schedlab {

sha256::sha256() : ctx_(EVP_MD_CTX_new())
{
    if (!ctx_ || EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1) {
        EVP_MD_CTX_free(ctx_);
        throw std::runtime_error("SHA-256 failed (OpenSSL EVP_DigestInit_ex)");
    }
}

sha256::~sha256()
{
    EVP_MD_CTX_free(ctx_);
}

void sha256::update(const void* data, std::size_t n)
{
    if (EVP_DigestUpdate(ctx_, data, n) != 1)
        throw std::runtime_error("SHA-256 failed (OpenSSL EVP_DigestUpdate)");
}

std::string sha256::hex()
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(ctx_, md, &len) != 1)
        throw std::runtime_error("SHA-256 failed (OpenSSL EVP_DigestFinal_ex)");
    std::string hex;
    hex.reserve(2 * len);
    for (unsigned int i = 0; i < len; ++i)
        hex += fmt::format("{:02x}", md[i]);
    return hex;
}

std::string sha256_hex(std::string_view text)
{
    sha256 h;
    h.update(text.data(), text.size());
    return h.hex();
}

} // namespace schedlab
