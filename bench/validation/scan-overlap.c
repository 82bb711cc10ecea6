// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a scan over other CPUs' runqueues costs per CPU when its loads are independent:
 * slow_path_line_pct (find_idlest_cpu()'s reads, src/sched/fair_select.cc
 * slow_path_read_cost()). A writer pinned to CPU B dirties LINES non-adjacent lines of
 * each of N fake runqueues; then a reader pinned to CPU A, in alternate rounds, either
 *  - walks the runqueues as update_sg_wakeup_stats() does (v6.5 fair.c): the addresses come
 *    from a table (as cpu_rq(i) from __per_cpu_offset[]), a few loads per runqueue and a
 *    little arithmetic (sums, a min, a test), so successive runqueues' loads are independent;
 *  - or reads the same lines by a pointer chase, one dependent load per line: the latency of
 *    one line from B's cache, as line_* prices it.
 * Prints the median round of each, per runqueue and per line, and their ratio (per-runqueue
 * time over one chased line: the share of a line one more runqueue costs).
 *
 * The lines of one runqueue are 2-5 lines apart, in different 128-byte pairs, so the
 * adjacent-line prefetcher does not pair them; the runqueues are in a random order. With two
 * CPUs it measures one writer's lines only, not 256 CPUs' at three distances.
 *
 * LINES (default 4, 1-6) is how many lines of each runqueue the scan reads: 4 is the fork
 * scan's estimate (update_sg_wakeup_stats()); update_sg_lb_stats() reads 3 lines a busy CPU's
 * owner keeps writing (nr_running's, cfs.h_nr_running's, cfs.avg's) and 5 of an idle one's
 * (with idle_cpu()'s curr and ttwu_pending lines). WORK (default 0) adds that many short steps
 * to each runqueue's body (an add of a loaded value and the step's count, kept by an empty
 * asm: 5 instructions each with the loop's), to ask how the overlap depends on the body's
 * length: the default body is about 55 instructions a runqueue at 4 lines (gcc 12 -O2), the
 * kernel's longer (cpu_util_cfs() twice, cpu_overutilized(), idle_cpu(), the cpumask walk).
 * A fifth argument, 1, makes the steps independent of the loads (the count alone; WORK is
 * then printed negative).
 *
 *   cc -O2 -pthread bench/validation/scan-overlap.c -o /tmp/so && /tmp/so [N [ROUNDS [LINES [WORK [INDEP]]]]]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_RQS 1024
#define MAX_LINES 6
#define MAX_ROUNDS 50000

struct line {
    void* next; /* the chase's next line */
    long v[7];
} __attribute__((aligned(64)));
struct fake_rq {
    struct line l[16];
};
/* the lines read of each runqueue, the first LINES of these */
static const int field[MAX_LINES] = {0, 3, 7, 12, 15, 9};

static struct fake_rq* rqs;
static struct fake_rq* cpu_rq_of[MAX_RQS];
static _Atomic int phase; /* even 2r: the writer's turn in round r; odd: the reader's */
static int nr, rounds, nlines, work, indep;

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    sched_setaffinity(0, sizeof s, &s);
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int cmp_u64(const void* a, const void* b)
{
    const uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
    return x < y ? -1 : x > y;
}

static void* writer(void* arg)
{
    (void)arg;
    pin(1);
    for (int r = 0; r < rounds; ++r) {
        while (atomic_load_explicit(&phase, memory_order_acquire) != 2 * r)
            ;
        for (int i = 0; i < nr; ++i)
            for (int j = 0; j < nlines; ++j)
                cpu_rq_of[i]->l[field[j]].v[0] += 1;
        atomic_store_explicit(&phase, 2 * r + 1, memory_order_release);
    }
    return NULL;
}

int main(int argc, char** argv)
{
    static uint64_t scan[MAX_ROUNDS], chase[MAX_ROUNDS];
    int nscan = 0, nchase = 0, perm[MAX_RQS];
    long sink = 0;
    pthread_t th;

    nr = argc > 1 ? atoi(argv[1]) : 256;
    rounds = 2 * (argc > 2 ? atoi(argv[2]) : 2000);
    nlines = argc > 3 ? atoi(argv[3]) : 4;
    work = argc > 4 ? atoi(argv[4]) : 0;
    indep = argc > 5 ? atoi(argv[5]) : 0;
    if (nr < 1 || nr > MAX_RQS || rounds < 2 || rounds > 2 * MAX_ROUNDS || nlines < 1 ||
        nlines > MAX_LINES || work < 0)
        return 2;
    rqs = aligned_alloc(4096, sizeof(struct fake_rq) * MAX_RQS);
    for (int i = 0; i < nr; ++i)
        perm[i] = i;
    srand(1);
    for (int i = nr - 1; i > 0; --i) {
        const int j = rand() % (i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int i = 0; i < nr; ++i)
        cpu_rq_of[i] = &rqs[perm[i]];
    for (int i = 0; i < nr; ++i)
        for (int j = 0; j < nlines; ++j) {
            cpu_rq_of[i]->l[field[j]].v[0] = i & 3;
            cpu_rq_of[i]->l[field[j]].next = j + 1 < nlines
                                                 ? (void*)&cpu_rq_of[i]->l[field[j + 1]]
                                                 : (void*)&cpu_rq_of[(i + 1) % nr]->l[field[0]];
        }
    pin(0);
    pthread_create(&th, NULL, writer, NULL);
    for (int r = 0; r < rounds; ++r) {
        while (atomic_load_explicit(&phase, memory_order_acquire) != 2 * r + 1)
            ;
        const uint64_t t0 = now_ns();
        if (r & 1) {
            struct line* p = &cpu_rq_of[0]->l[field[0]];
            for (int i = 0; i < nr * nlines; ++i) {
                sink += p->v[0];
                p = p->next;
            }
            sink += (long)p;
            chase[nchase++] = now_ns() - t0;
        } else {
            long load = 0, util = 0, running = 0, idle = 0;
            for (int i = 0; i < nr; ++i) {
                const struct fake_rq* q = cpu_rq_of[i];
                long v[MAX_LINES] = {0};
                for (int j = 0; j < nlines; ++j)
                    v[j] = q->l[field[j]].v[0];
                const long a = v[0], b = v[1], c = v[2], d = v[3] + v[4] + v[5];
                load += a;
                util += b < 1024 ? b : 1024;
                running += c;
                if (!c && !d)
                    idle++;
                long w = 0;
                for (int k = 0; k < work; ++k) {
                    long t = (indep ? 0 : a) + k; /* kept, not folded */
                    __asm__ volatile("" : "+r"(t));
                    w += t;
                }
                running += w & 1;
            }
            sink += load + util + running + idle;
            scan[nscan++] = now_ns() - t0;
        }
        atomic_store_explicit(&phase, 2 * r + 2, memory_order_release);
    }
    pthread_join(th, NULL);
    qsort(scan, nscan, sizeof scan[0], cmp_u64);
    qsort(chase, nchase, sizeof chase[0], cmp_u64);
    const double per_rq = (double)scan[nscan / 2] / nr;
    const double per_line = (double)chase[nchase / 2] / (nr * nlines);
    printf("%d rqs x %d lines, work %d, %d rounds each: scan %.1f ns per rq; chase %.1f ns per "
           "line; a rq costs %.0f%% of a line (%ld)\n",
           nr, nlines, indep ? -work : work, rounds / 2, per_rq, per_line, 100.0 * per_rq / per_line, sink & 1);
    return 0;
}
