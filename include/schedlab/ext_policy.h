/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SCHEDLAB_EXT_POLICY_H
#define SCHEDLAB_EXT_POLICY_H
/*
 * schedlab's ext class: the C ABI of a scheduling policy, in the manner of a
 * sched_ext BPF scheduler (struct sched_ext_ops, kernel/sched/ext.c of v6.12).
 * A policy is a table of callbacks (struct schedlab_ext_ops) that the ext
 * class calls at the kernel's call sites, and the policy acts through the
 * helpers (struct schedlab_ext_helpers), each the kfunc of the same name.
 * docs/classes.md describes the contract; examples/ext_policy/ has a policy.
 *
 * A policy built into a shared object exports
 *
 *     const struct schedlab_ext_ops *schedlab_ext_policy(uint32_t abi_version);
 *
 * returning its table (or NULL if it cannot serve abi_version), and runs with
 * `--kernel 6.12+ext:./my_policy.so`. Rules:
 *
 * - No global state. A simulation may run many kernels at once, in threads:
 *   keep state in ctx->state (ops->state_size bytes, zeroed, one per kernel)
 *   and per task in p->policy_data (zeroed before init_task).
 * - Deterministic. Same calls, same answers: no clocks, no random numbers but
 *   your own seeded ones, no addresses as keys.
 * - Every task the ext class enqueues is the policy's until it inserts it into
 *   a dispatch queue (DSQ), at enqueue() or select_cpu() (direct dispatch, once
 *   per call) or later from dispatch(). A task left with the policy that does
 *   not run within timeout_ms ejects the policy (the watchdog); so does a
 *   broken contract (a task inserted twice in one callback, a DSQ that does not
 *   exist, a CPU out of range or outside the task's mask, vtime order on a
 *   built-in DSQ, FIFO and vtime order mixed on one DSQ) and scx_bpf_error().
 *   Ejected, every task goes back to the fair class and the run reports the
 *   error with the task, CPU and time, and fails.
 */
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SCHEDLAB_EXT_ABI_VERSION 1u

/* DSQ ids (include/linux/sched/ext.h enum scx_dsq_id_flags, 6.12). A policy's
 * own DSQs have ids below SCX_DSQ_FLAG_BUILTIN, made with scx_bpf_create_dsq(). */
#define SCX_DSQ_FLAG_BUILTIN (1ULL << 63)
#define SCX_DSQ_FLAG_LOCAL_ON (1ULL << 62)
#define SCX_DSQ_INVALID (SCX_DSQ_FLAG_BUILTIN | 0)
#define SCX_DSQ_GLOBAL (SCX_DSQ_FLAG_BUILTIN | 1)
#define SCX_DSQ_LOCAL (SCX_DSQ_FLAG_BUILTIN | 2)
#define SCX_DSQ_LOCAL_ON (SCX_DSQ_FLAG_BUILTIN | SCX_DSQ_FLAG_LOCAL_ON)
#define SCX_DSQ_LOCAL_CPU_MASK 0xffffffffULL

/* Slices, ns (enum scx_public_consts). */
#define SCX_SLICE_DFL (20ULL * 1000 * 1000)
#define SCX_SLICE_INF UINT64_MAX

/* enqueue() / dsq_insert() flags (enum scx_enq_flags, 6.12). */
#define SCX_ENQ_WAKEUP (1ULL << 0)   /* the task was woken up */
#define SCX_ENQ_HEAD (1ULL << 4)     /* insert at the head of a FIFO DSQ */
#define SCX_ENQ_PREEMPT (1ULL << 32) /* into a local DSQ: preempt its CPU's ext task */
#define SCX_ENQ_REENQ (1ULL << 40)   /* not used by schedlab */
#define SCX_ENQ_LAST (1ULL << 41)    /* not used by schedlab (SCX_OPS_ENQ_LAST is not modelled) */

/* dequeue() flags (enum scx_deq_flags). */
#define SCX_DEQ_SLEEP (1ULL << 0) /* the task is going to sleep */

/* select_cpu() wake flags (enum scx_wake_flags: the kernel's WF_*). */
#define SCX_WAKE_FORK 0x04
#define SCX_WAKE_TTWU 0x08
#define SCX_WAKE_SYNC 0x10

/* scx_bpf_kick_cpu() flags (enum scx_kick_flags). */
#define SCX_KICK_IDLE (1ULL << 0)    /* only if the CPU is idle */
#define SCX_KICK_PREEMPT (1ULL << 1) /* zero its ext task's slice and reschedule */

/* scx_bpf_pick_idle_cpu() flags (enum scx_pick_idle_cpu_flags). */
#define SCX_PICK_IDLE_CORE (1ULL << 0) /* a CPU whose whole core is idle */

/* A task as the policy sees it (the parts of p->scx and p it reads). */
struct schedlab_ext_task {
    int32_t pid;
    int32_t tgid;
    const char *comm;
    int32_t cpu;             /* task_cpu(p), as of the callback */
    int32_t nr_cpus_allowed;
    uint32_t weight;         /* p->scx.weight: 100 at nice 0 (sched_prio_to_weight / 10.24) */
    int32_t nice;
    uint64_t slice;          /* p->scx.slice: read-write, ns left of the current slice */
    uint64_t dsq_vtime;      /* p->scx.dsq_vtime: read-write */
    uint64_t sum_exec_runtime; /* ns run so far, as of the callback */
    uint64_t policy_data[4]; /* the policy's own per-task storage */
    void *schedlab_private;  /* the simulator's: do not touch */
};

/* Why a policy was ejected (struct scx_exit_info, reduced). */
struct schedlab_ext_exit_info {
    int32_t kind;            /* 0 none (the run ended), 1024 error, 1025 scx_bpf_error, 1026 stall */
    const char *reason;      /* "runtime error", "scx_bpf_error", "runnable task stall", ... */
    const char *msg;         /* the message, naming the task and CPU */
};

struct schedlab_ext_ctx;

/* The kfuncs. Call them through the inline wrappers below. */
struct schedlab_ext_helpers {
    uint32_t abi_version;
    uint64_t (*now)(struct schedlab_ext_ctx *ctx);       /* bpf_ktime_get_ns() */
    int32_t (*nr_cpu_ids)(struct schedlab_ext_ctx *ctx); /* scx_bpf_nr_cpu_ids() */
    int32_t (*cpu_llc)(struct schedlab_ext_ctx *ctx, int32_t cpu);  /* LLC index, 0.. */
    int32_t (*nr_llcs)(struct schedlab_ext_ctx *ctx);
    int32_t (*cpu_node)(struct schedlab_ext_ctx *ctx, int32_t cpu); /* scx_bpf_cpu_node() */
    int32_t (*create_dsq)(struct schedlab_ext_ctx *ctx, uint64_t dsq_id, int32_t node);
    void (*dsq_insert)(struct schedlab_ext_ctx *ctx, struct schedlab_ext_task *p,
                       uint64_t dsq_id, uint64_t slice, uint64_t enq_flags);
    void (*dsq_insert_vtime)(struct schedlab_ext_ctx *ctx, struct schedlab_ext_task *p,
                             uint64_t dsq_id, uint64_t slice, uint64_t vtime,
                             uint64_t enq_flags);
    bool (*dsq_move_to_local)(struct schedlab_ext_ctx *ctx, uint64_t dsq_id);
    int32_t (*dsq_nr_queued)(struct schedlab_ext_ctx *ctx, uint64_t dsq_id);
    void (*kick_cpu)(struct schedlab_ext_ctx *ctx, int32_t cpu, uint64_t flags);
    int32_t (*select_cpu_dfl)(struct schedlab_ext_ctx *ctx, struct schedlab_ext_task *p,
                              int32_t prev_cpu, uint64_t wake_flags, bool *is_idle);
    bool (*test_and_clear_cpu_idle)(struct schedlab_ext_ctx *ctx, int32_t cpu);
    int32_t (*pick_idle_cpu)(struct schedlab_ext_ctx *ctx, struct schedlab_ext_task *p,
                             uint64_t flags);
    bool (*task_allowed_on)(struct schedlab_ext_ctx *ctx, struct schedlab_ext_task *p,
                            int32_t cpu);
    void (*error)(struct schedlab_ext_ctx *ctx, const char *msg); /* scx_bpf_error() */
};

struct schedlab_ext_ctx {
    const struct schedlab_ext_helpers *h;
    void *state; /* ops->state_size bytes, zeroed at load, one per simulated kernel */
};

/* The policy (struct sched_ext_ops, 6.12). Every callback is optional but
 * dispatch() for a policy that keeps tasks (without enqueue(), tasks go to the
 * global DSQ; without select_cpu(), scx_bpf_select_cpu_dfl() places them). */
struct schedlab_ext_ops {
    uint32_t abi_version; /* SCHEDLAB_EXT_ABI_VERSION */
    const char *name;
    uint64_t flags;       /* SCX_OPS_* flags: none is modelled, must be 0 */
    uint32_t timeout_ms;  /* watchdog timeout, 1..30000; 0: 30000 (SCX_WATCHDOG_MAX_TIMEOUT) */
    uint32_t state_size;  /* bytes of ctx->state */

    int32_t (*select_cpu)(struct schedlab_ext_ctx *ctx, struct schedlab_ext_task *p,
                          int32_t prev_cpu, uint64_t wake_flags);
    void (*enqueue)(struct schedlab_ext_ctx *ctx, struct schedlab_ext_task *p, uint64_t enq_flags);
    void (*dequeue)(struct schedlab_ext_ctx *ctx, struct schedlab_ext_task *p, uint64_t deq_flags);
    void (*dispatch)(struct schedlab_ext_ctx *ctx, int32_t cpu, struct schedlab_ext_task *prev);
    void (*tick)(struct schedlab_ext_ctx *ctx, struct schedlab_ext_task *p);
    void (*runnable)(struct schedlab_ext_ctx *ctx, struct schedlab_ext_task *p, uint64_t enq_flags);
    void (*running)(struct schedlab_ext_ctx *ctx, struct schedlab_ext_task *p);
    void (*stopping)(struct schedlab_ext_ctx *ctx, struct schedlab_ext_task *p, bool runnable);
    void (*quiescent)(struct schedlab_ext_ctx *ctx, struct schedlab_ext_task *p, uint64_t deq_flags);
    void (*cpu_acquire)(struct schedlab_ext_ctx *ctx, int32_t cpu);
    void (*cpu_release)(struct schedlab_ext_ctx *ctx, int32_t cpu);
    int32_t (*init_task)(struct schedlab_ext_ctx *ctx, struct schedlab_ext_task *p, bool fork);
    void (*exit_task)(struct schedlab_ext_ctx *ctx, struct schedlab_ext_task *p);
    void (*enable)(struct schedlab_ext_ctx *ctx, struct schedlab_ext_task *p);
    int32_t (*init)(struct schedlab_ext_ctx *ctx);
    void (*exit)(struct schedlab_ext_ctx *ctx, const struct schedlab_ext_exit_info *ei);
};

typedef const struct schedlab_ext_ops *(*schedlab_ext_policy_fn)(uint32_t abi_version);
#define SCHEDLAB_EXT_POLICY_SYMBOL "schedlab_ext_policy"
/* Marks the entry point exported when the policy is built with hidden visibility. */
#define SCHEDLAB_EXT_EXPORT __attribute__((visibility("default")))

/* The kfuncs under their kernel names (v6.13+; v6.12 calls dsq_insert
 * scx_bpf_dispatch and dsq_move_to_local scx_bpf_consume). */
static inline uint64_t bpf_ktime_get_ns(struct schedlab_ext_ctx *ctx) { return ctx->h->now(ctx); }
static inline int32_t scx_bpf_nr_cpu_ids(struct schedlab_ext_ctx *ctx) { return ctx->h->nr_cpu_ids(ctx); }
static inline int32_t scx_bpf_create_dsq(struct schedlab_ext_ctx *ctx, uint64_t dsq_id, int32_t node)
{
    return ctx->h->create_dsq(ctx, dsq_id, node);
}
static inline void scx_bpf_dsq_insert(struct schedlab_ext_ctx *ctx, struct schedlab_ext_task *p,
                                      uint64_t dsq_id, uint64_t slice, uint64_t enq_flags)
{
    ctx->h->dsq_insert(ctx, p, dsq_id, slice, enq_flags);
}
static inline void scx_bpf_dsq_insert_vtime(struct schedlab_ext_ctx *ctx,
                                            struct schedlab_ext_task *p, uint64_t dsq_id,
                                            uint64_t slice, uint64_t vtime, uint64_t enq_flags)
{
    ctx->h->dsq_insert_vtime(ctx, p, dsq_id, slice, vtime, enq_flags);
}
static inline bool scx_bpf_dsq_move_to_local(struct schedlab_ext_ctx *ctx, uint64_t dsq_id)
{
    return ctx->h->dsq_move_to_local(ctx, dsq_id);
}
static inline int32_t scx_bpf_dsq_nr_queued(struct schedlab_ext_ctx *ctx, uint64_t dsq_id)
{
    return ctx->h->dsq_nr_queued(ctx, dsq_id);
}
static inline void scx_bpf_kick_cpu(struct schedlab_ext_ctx *ctx, int32_t cpu, uint64_t flags)
{
    ctx->h->kick_cpu(ctx, cpu, flags);
}
static inline int32_t scx_bpf_select_cpu_dfl(struct schedlab_ext_ctx *ctx,
                                             struct schedlab_ext_task *p, int32_t prev_cpu,
                                             uint64_t wake_flags, bool *is_idle)
{
    return ctx->h->select_cpu_dfl(ctx, p, prev_cpu, wake_flags, is_idle);
}
static inline bool scx_bpf_test_and_clear_cpu_idle(struct schedlab_ext_ctx *ctx, int32_t cpu)
{
    return ctx->h->test_and_clear_cpu_idle(ctx, cpu);
}
static inline int32_t scx_bpf_pick_idle_cpu(struct schedlab_ext_ctx *ctx,
                                            struct schedlab_ext_task *p, uint64_t flags)
{
    return ctx->h->pick_idle_cpu(ctx, p, flags);
}
static inline void scx_bpf_error(struct schedlab_ext_ctx *ctx, const char *msg)
{
    ctx->h->error(ctx, msg);
}

#ifdef __cplusplus
}
#endif
#endif /* SCHEDLAB_EXT_POLICY_H */
