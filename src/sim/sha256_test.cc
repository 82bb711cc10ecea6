// SPDX-License-Identifier: GPL-2.0-only
#include "sim/sha256.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

// FIPS 180-2, appendix B.1 ("abc") and B.2; the incremental form gives the one-shot digest.
TEST(sha256, gives_the_standards_test_vectors_whole_or_in_pieces)
{
    EXPECT_EQ(sha256_hex("abc"),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const std::string b2 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256 h;
    h.update(b2.data(), 10);
    h.update(b2.data() + 10, b2.size() - 10);
    EXPECT_EQ(h.hex(), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(sha256_hex(b2), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

} // namespace
} // namespace schedlab
