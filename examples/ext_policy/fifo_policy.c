/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * An example ext policy for schedlab, built as a shared object by the
 * project's CMake (build/examples/ext_policy/libschedlab_fifo_policy.so):
 *
 *     schedlab run --machine milan-2s --kernel 6.12+ext:build/examples/ext_policy/libschedlab_fifo_policy.so -- hackbench
 *
 * One FIFO dispatch queue for the whole machine with a 5 ms slice:
 * - select_cpu: the default placement (scx_bpf_select_cpu_dfl()); a wakee
 *   that found an idle CPU goes straight to that CPU's local DSQ.
 * - enqueue: any other task joins the shared FIFO; an idle CPU, if any, is
 *   kicked to take it.
 * - dispatch: a CPU needing a task takes the head of the shared FIFO.
 * It counts its enqueues and dispatches in its state (ctx->state), one copy
 * per simulated kernel: a policy keeps no global variables.
 */
#include <schedlab/ext_policy.h>

#include <stddef.h>

#define SHARED_DSQ 1
#define SLICE_NS (5ULL * 1000 * 1000)

struct fifo_state {
    uint64_t nr_enqueued;
    uint64_t nr_dispatched;
};

static struct fifo_state *state(struct schedlab_ext_ctx *ctx)
{
    return (struct fifo_state *)ctx->state;
}

static int32_t fifo_select_cpu(struct schedlab_ext_ctx *ctx, struct schedlab_ext_task *p,
                               int32_t prev_cpu, uint64_t wake_flags)
{
    bool is_idle = false;
    int32_t cpu = scx_bpf_select_cpu_dfl(ctx, p, prev_cpu, wake_flags, &is_idle);

    if (is_idle)
        scx_bpf_dsq_insert(ctx, p, SCX_DSQ_LOCAL, SLICE_NS, 0);
    return cpu;
}

static void fifo_enqueue(struct schedlab_ext_ctx *ctx, struct schedlab_ext_task *p,
                         uint64_t enq_flags)
{
    int32_t cpu;

    state(ctx)->nr_enqueued++;
    scx_bpf_dsq_insert(ctx, p, SHARED_DSQ, SLICE_NS, enq_flags);
    cpu = scx_bpf_pick_idle_cpu(ctx, p, 0);
    if (cpu >= 0)
        scx_bpf_kick_cpu(ctx, cpu, SCX_KICK_IDLE);
}

static void fifo_dispatch(struct schedlab_ext_ctx *ctx, int32_t cpu, struct schedlab_ext_task *prev)
{
    (void)cpu;
    (void)prev;
    if (scx_bpf_dsq_move_to_local(ctx, SHARED_DSQ))
        state(ctx)->nr_dispatched++;
}

static int32_t fifo_init(struct schedlab_ext_ctx *ctx)
{
    return scx_bpf_create_dsq(ctx, SHARED_DSQ, -1);
}

static const struct schedlab_ext_ops fifo_ops = {
    .abi_version = SCHEDLAB_EXT_ABI_VERSION,
    .name = "example_fifo",
    .state_size = sizeof(struct fifo_state),
    .select_cpu = fifo_select_cpu,
    .enqueue = fifo_enqueue,
    .dispatch = fifo_dispatch,
    .init = fifo_init,
};

SCHEDLAB_EXT_EXPORT const struct schedlab_ext_ops *schedlab_ext_policy(uint32_t abi_version)
{
    return abi_version == SCHEDLAB_EXT_ABI_VERSION ? &fifo_ops : NULL;
}
