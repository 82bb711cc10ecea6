// SPDX-License-Identifier: GPL-2.0-only
/*
 * The one translation unit of schedlab_lib_pch (and schedlab_cold_pch), the targets whose
 * precompiled header the src/ libraries reuse when SCHEDLAB_PCH is on (CMakeLists.txt).
 * Nothing else is in it.
 */
