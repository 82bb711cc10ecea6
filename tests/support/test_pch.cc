// SPDX-License-Identifier: GPL-2.0-only
/*
 * The one translation unit of schedlab_test_pch, the target whose precompiled header every
 * test program reuses when SCHEDLAB_PCH is on (CMakeLists.txt). Nothing else is in it.
 */
