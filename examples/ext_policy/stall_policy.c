/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A broken ext policy, to show (and test) what an ejection looks like: it
 * keeps every task it is given and never dispatches one, so the first task
 * that is not placed on an idle CPU by the default select_cpu waits until the
 * watchdog (timeout_ms 100) ejects the policy:
 *
 *     schedlab run --kernel 6.12+ext:build/examples/ext_policy/libschedlab_stall_policy.so -- hackbench
 *     schedlab: error: --kernel: ext policy '...' was ejected at 0.150... s on cpu0
 *     (runnable task stall): sched-messaging[2] failed to run for 0.1..s; ...
 */
#include <schedlab/ext_policy.h>

#include <stddef.h>

static void stall_enqueue(struct schedlab_ext_ctx *ctx, struct schedlab_ext_task *p,
                          uint64_t enq_flags)
{
    (void)ctx;
    (void)p;
    (void)enq_flags; /* kept: never inserted into a DSQ */
}

static const struct schedlab_ext_ops stall_ops = {
    .abi_version = SCHEDLAB_EXT_ABI_VERSION,
    .name = "example_stall",
    .timeout_ms = 100,
    .enqueue = stall_enqueue,
};

SCHEDLAB_EXT_EXPORT const struct schedlab_ext_ops *schedlab_ext_policy(uint32_t abi_version)
{
    return abi_version == SCHEDLAB_EXT_ABI_VERSION ? &stall_ops : NULL;
}
