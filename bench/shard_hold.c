// SPDX-License-Identifier: GPL-2.0-only
/*
 * The host's cost of an uncontended SHARED_RUNQ shard operation: take a spinlock whose line
 * is this CPU's, link or unlink one list node, release the lock. SHARED_RUNQ v3 does one at
 * each push (`__enqueue_entity()`) and one at each unlink (`__dequeue_entity()`), under
 * `struct shared_runq_shard { struct list_head list; raw_spinlock_t lock; }
 * ____cacheline_aligned;` (20230809221218.163894-8-void@manifault.com). The lock here is a
 * queued spinlock's uncontended fast path (a compare-and-swap of 0 to 1 with acquire order,
 * a release store of 0), the list a doubly linked ring with the head on the lock's line; the
 * nodes, two lines apart, stay in this CPU's cache. So the figure is the operation without
 * a line transfer or a wait, the part costs.def's `shard_lock_hold` stands for (the lines
 * are charged apart, by distance).
 *
 * Build and run (not part of the CMake build: a host measurement):
 *   cc -O2 -o shard_hold bench/shard_hold.c && ./shard_hold
 * It prints the best of 5 means over 2 x 10^7 pairs of a push and an unlink of one node.
 */
#include <stdio.h>
#include <time.h>

struct node {
	struct node *next, *prev;
};

struct shard {
	struct node list;
	unsigned int lock;
} __attribute__((aligned(64)));

static struct shard shard;
static struct node nodes[64] __attribute__((aligned(64)));

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void lock(unsigned int *l)
{
	unsigned int zero;

	do {
		zero = 0;
	} while (!__atomic_compare_exchange_n(l, &zero, 1, 0, __ATOMIC_ACQUIRE,
					      __ATOMIC_RELAXED));
}

static void unlock(unsigned int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

static void link_tail(struct node *n, struct node *head)
{
	struct node *tail = head->prev;

	n->next = head;
	n->prev = tail;
	tail->next = n;
	head->prev = n;
}

static void unlink_init(struct node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n;
	n->prev = n;
}

int main(void)
{
	const long pairs = 20000000;
	double best = 1e300;

	shard.list.next = shard.list.prev = &shard.list;
	for (int rep = 0; rep < 5; rep++) {
		const double t0 = now_ns();

		for (long i = 0; i < pairs; i++) {
			struct node *n = &nodes[(i & 7) * 8];

			lock(&shard.lock);
			link_tail(n, &shard.list);
			unlock(&shard.lock);
			lock(&shard.lock);
			unlink_init(n);
			unlock(&shard.lock);
		}
		const double ns = (now_ns() - t0) / (double)pairs / 2;

		if (ns < best)
			best = ns;
	}
	printf("uncontended lock, list operation, unlock: %.2f ns each (best of 5)\n", best);
	return 0;
}
