// SPDX-License-Identifier: GPL-2.0-only
/*
 * Read-after-write latency of one cache line between two CPUs: the cost the
 * model charges a reader of tg->load_avg after another CPU wrote it
 * (update_cfs_group() in src/sched/fair_pelt.cc, line_* costs). A writer pinned to CPU A adds
 * to the line; then a reader pinned to CPU B loads it twice, timing each load
 * with rdtscp: the first load fetches the line from A's cache, the second
 * hits. Prints both in TSC cycles and ns (the TSC rate is measured against
 * CLOCK_MONOTONIC).
 *
 * With two CPUs this measures one transfer only; how a line serves many
 * readers of one version at once needs more CPUs than this VM has
 * (docs/validation.md, "The tg->load_avg line").
 *
 *   cc -O2 -pthread bench/validation/read-after-write.c -o /tmp/raw && /tmp/raw [A B [ROUNDS]]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

static _Alignas(64) _Atomic long line;  /* the contended line */
static _Alignas(64) _Atomic long phase; /* odd: the writer's turn; even: the reader's */
static int cpu_writer = 0, cpu_reader = 1;
static long rounds = 200000;

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set)) {
        fprintf(stderr, "read-after-write: cannot pin to cpu%d\n", cpu);
        exit(2);
    }
}

static void* writer(void* unused)
{
    (void)unused;
    pin(cpu_writer);
    for (long i = 1; i <= rounds; i++) {
        while (atomic_load_explicit(&phase, memory_order_acquire) != 2 * i - 1)
            ;
        atomic_fetch_add_explicit(&line, 1, memory_order_relaxed);
        atomic_store_explicit(&phase, 2 * i, memory_order_release);
    }
    return NULL;
}

static int cmp_u64(const void* a, const void* b)
{
    const unsigned long long x = *(const unsigned long long*)a, y = *(const unsigned long long*)b;
    return x < y ? -1 : x > y;
}

static double tsc_per_ns(void)
{
    struct timespec t0, t1;
    unsigned aux;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const unsigned long long c0 = __rdtscp(&aux);
    do
        clock_gettime(CLOCK_MONOTONIC, &t1);
    while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 100000000L);
    const unsigned long long c1 = __rdtscp(&aux);
    return (double)(c1 - c0) / (double)((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec));
}

int main(int argc, char** argv)
{
    if (argc >= 3) {
        cpu_writer = atoi(argv[1]);
        cpu_reader = atoi(argv[2]);
    }
    if (argc >= 4)
        rounds = atol(argv[3]);
    if (rounds < 10 || cpu_writer == cpu_reader) {
        fprintf(stderr, "usage: %s [WRITER_CPU READER_CPU [ROUNDS >= 10]] (two different CPUs)\n", argv[0]);
        return 2;
    }
    unsigned long long* miss = malloc(sizeof(*miss) * (size_t)rounds);
    unsigned long long* hit = malloc(sizeof(*hit) * (size_t)rounds);
    if (!miss || !hit)
        return 2;
    pin(cpu_reader);
    pthread_t t;
    pthread_create(&t, NULL, writer, NULL);
    for (long i = 1; i <= rounds; i++) {
        atomic_store_explicit(&phase, 2 * i - 1, memory_order_release);
        while (atomic_load_explicit(&phase, memory_order_acquire) != 2 * i)
            ;
        unsigned aux;
        const unsigned long long t0 = __rdtscp(&aux);
        const long first = atomic_load_explicit(&line, memory_order_relaxed);
        const unsigned long long t1 = __rdtscp(&aux);
        const long second = atomic_load_explicit(&line, memory_order_relaxed);
        const unsigned long long t2 = __rdtscp(&aux);
        if (first != second || first != i)
            abort();
        miss[i - 1] = t1 - t0;
        hit[i - 1] = t2 - t1;
    }
    pthread_join(t, NULL);
    qsort(miss, (size_t)rounds, sizeof(*miss), cmp_u64);
    qsort(hit, (size_t)rounds, sizeof(*hit), cmp_u64);
    const double f = tsc_per_ns();
    printf("cpu%d writes, cpu%d reads, %ld rounds (TSC %.3f per ns; each figure includes one rdtscp)\n",
           cpu_writer, cpu_reader, rounds, f);
    printf("first read after the write: p10 %llu  p50 %llu  p90 %llu cycles = p50 %.0f ns\n",
           miss[rounds / 10], miss[rounds / 2], miss[9 * rounds / 10], miss[rounds / 2] / f);
    printf("the read after that:        p10 %llu  p50 %llu  p90 %llu cycles = p50 %.0f ns\n",
           hit[rounds / 10], hit[rounds / 2], hit[9 * rounds / 10], hit[rounds / 2] / f);
    free(miss);
    free(hit);
    return 0;
}
