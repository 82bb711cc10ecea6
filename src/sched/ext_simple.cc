// SPDX-License-Identifier: GPL-2.0-only
/*
 * The built-in ext policy "simple" (and "simple_fifo"), after
 * tools/sched_ext/scx_simple.bpf.c of v6.12: a wakee that finds an idle CPU
 * (scx_bpf_select_cpu_dfl()) goes straight to its local DSQ; every other task
 * joins one shared DSQ, which each CPU consumes when it needs a task. By
 * default the shared DSQ is in weighted vtime order: a task's vtime advances
 * by the slice it used scaled by 100 / weight, and a waking task's vtime is
 * brought up to at most one slice behind the current vtime (so a sleeper
 * cannot bank more than one slice); "simple_fifo" is scx_simple -f, FIFO.
 * kernel: scx_simple (tools/sched_ext/scx_simple.bpf.c), v6.12.
 * Differs: the per-CPU stat counters are left out.
 */
#include "sched/ext_load.h"

namespace schedlab {

namespace {

constexpr u64 SHARED_DSQ = 0;

struct simple_state {
    u64 vtime_now;
};

simple_state& st(schedlab_ext_ctx* ctx)
{
    return *static_cast<simple_state*>(ctx->state);
}

bool vtime_before(u64 a, u64 b)
{
    return static_cast<s64>(a - b) < 0;
}

s32 simple_select_cpu(schedlab_ext_ctx* ctx, schedlab_ext_task* p, s32 prev_cpu, u64 wake_flags)
{
    bool is_idle = false;
    const s32 cpu = scx_bpf_select_cpu_dfl(ctx, p, prev_cpu, wake_flags, &is_idle);
    if (is_idle)
        scx_bpf_dsq_insert(ctx, p, SCX_DSQ_LOCAL, SCX_SLICE_DFL, 0);
    return cpu;
}

void simple_enqueue_fifo(schedlab_ext_ctx* ctx, schedlab_ext_task* p, u64 enq_flags)
{
    scx_bpf_dsq_insert(ctx, p, SHARED_DSQ, SCX_SLICE_DFL, enq_flags);
}

void simple_enqueue(schedlab_ext_ctx* ctx, schedlab_ext_task* p, u64 enq_flags)
{
    u64 vtime = p->dsq_vtime;
    // limit the budget an idling task can accumulate to one slice
    if (vtime_before(vtime, st(ctx).vtime_now - SCX_SLICE_DFL))
        vtime = st(ctx).vtime_now - SCX_SLICE_DFL;
    scx_bpf_dsq_insert_vtime(ctx, p, SHARED_DSQ, SCX_SLICE_DFL, vtime, enq_flags);
}

void simple_dispatch(schedlab_ext_ctx* ctx, s32 /*cpu*/, schedlab_ext_task* /*prev*/)
{
    scx_bpf_dsq_move_to_local(ctx, SHARED_DSQ);
}

void simple_running(schedlab_ext_ctx* ctx, schedlab_ext_task* p)
{
    // the global vtime follows the task that runs, never going back
    if (vtime_before(st(ctx).vtime_now, p->dsq_vtime))
        st(ctx).vtime_now = p->dsq_vtime;
}

void simple_stopping(schedlab_ext_ctx* /*ctx*/, schedlab_ext_task* p, bool /*runnable*/)
{
    // the slice used, scaled by the inverse of the weight (100 at nice 0)
    p->dsq_vtime += (SCX_SLICE_DFL - p->slice) * 100 / p->weight;
}

void simple_enable(schedlab_ext_ctx* ctx, schedlab_ext_task* p)
{
    p->dsq_vtime = st(ctx).vtime_now;
}

s32 simple_init(schedlab_ext_ctx* ctx)
{
    return scx_bpf_create_dsq(ctx, SHARED_DSQ, -1);
}

} // namespace

const schedlab_ext_ops ext_simple_ops = {
    .abi_version = SCHEDLAB_EXT_ABI_VERSION,
    .name = "simple",
    .state_size = sizeof(simple_state),
    .select_cpu = simple_select_cpu,
    .enqueue = simple_enqueue,
    .dispatch = simple_dispatch,
    .running = simple_running,
    .stopping = simple_stopping,
    .enable = simple_enable,
    .init = simple_init,
};

const schedlab_ext_ops ext_simple_fifo_ops = {
    .abi_version = SCHEDLAB_EXT_ABI_VERSION,
    .name = "simple_fifo",
    .select_cpu = simple_select_cpu,
    .enqueue = simple_enqueue_fifo,
    .dispatch = simple_dispatch,
    .init = simple_init,
};

} // namespace schedlab
