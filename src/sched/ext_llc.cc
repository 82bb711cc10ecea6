// SPDX-License-Identifier: GPL-2.0-only
/*
 * The built-in ext policy "llc": a FIFO DSQ per last-level cache.
 * model: schedlab's own (no kernel or scx counterpart), the simplest
 * cache-aware policy:
 *
 * - select_cpu: an idle CPU of prev_cpu's LLC (prev_cpu first, then upwards,
 *   wrapping), inserted into that CPU's local DSQ; else prev_cpu.
 * - enqueue: the DSQ of the LLC of the task's CPU, at the tail; an idle CPU of
 *   that LLC that the task may run on is kicked (SCX_KICK_IDLE) to take it, or
 *   if there is none any idle CPU it may run on (scx_bpf_pick_idle_cpu()).
 * - dispatch: this CPU's LLC's DSQ first, then the other LLCs' in index
 *   order from this one's (nearest-first by index, not by distance), so an
 *   idle CPU steals across LLCs only when its own LLC has nothing.
 */
#include "sched/ext_load.h"

namespace schedlab {

namespace {

// DSQ ids: the LLC's index.
s32 llc_select_cpu(schedlab_ext_ctx* ctx, schedlab_ext_task* p, s32 prev_cpu, u64 /*wake_flags*/)
{
    const s32 n = scx_bpf_nr_cpu_ids(ctx);
    const s32 llc = ctx->h->cpu_llc(ctx, prev_cpu);
    for (s32 i = 0; i < n; ++i) {
        const s32 cpu = (prev_cpu + i) % n;
        if (ctx->h->cpu_llc(ctx, cpu) != llc || !ctx->h->task_allowed_on(ctx, p, cpu))
            continue;
        if (scx_bpf_test_and_clear_cpu_idle(ctx, cpu)) {
            scx_bpf_dsq_insert(ctx, p, SCX_DSQ_LOCAL, SCX_SLICE_DFL, 0);
            return cpu;
        }
    }
    return prev_cpu;
}

void llc_enqueue(schedlab_ext_ctx* ctx, schedlab_ext_task* p, u64 enq_flags)
{
    const s32 llc = ctx->h->cpu_llc(ctx, p->cpu);
    scx_bpf_dsq_insert(ctx, p, static_cast<u64>(llc), SCX_SLICE_DFL, enq_flags);
    const s32 n = scx_bpf_nr_cpu_ids(ctx);
    for (s32 i = 0; i < n; ++i) {
        const s32 cpu = (p->cpu + i) % n;
        if (ctx->h->cpu_llc(ctx, cpu) != llc || !ctx->h->task_allowed_on(ctx, p, cpu))
            continue;
        if (scx_bpf_test_and_clear_cpu_idle(ctx, cpu)) {
            scx_bpf_kick_cpu(ctx, cpu, SCX_KICK_IDLE);
            return;
        }
    }
    // none idle in the LLC: an idle CPU elsewhere steals it in dispatch
    const s32 cpu = scx_bpf_pick_idle_cpu(ctx, p, 0);
    if (cpu >= 0)
        scx_bpf_kick_cpu(ctx, cpu, SCX_KICK_IDLE);
}

void llc_dispatch(schedlab_ext_ctx* ctx, s32 cpu, schedlab_ext_task* /*prev*/)
{
    const s32 nr = ctx->h->nr_llcs(ctx);
    const s32 own = ctx->h->cpu_llc(ctx, cpu);
    for (s32 i = 0; i < nr; ++i)
        if (scx_bpf_dsq_move_to_local(ctx, static_cast<u64>((own + i) % nr)))
            return;
}

s32 llc_init(schedlab_ext_ctx* ctx)
{
    for (s32 llc = 0; llc < ctx->h->nr_llcs(ctx); ++llc)
        if (const s32 rc = scx_bpf_create_dsq(ctx, static_cast<u64>(llc), -1))
            return rc;
    return 0;
}

} // namespace

const schedlab_ext_ops ext_llc_ops = {
    .abi_version = SCHEDLAB_EXT_ABI_VERSION,
    .name = "llc",
    .select_cpu = llc_select_cpu,
    .enqueue = llc_enqueue,
    .dispatch = llc_dispatch,
    .init = llc_init,
};

} // namespace schedlab
