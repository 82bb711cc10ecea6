// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The kernel objects simulated tasks share: wait queues, pipes, AF_UNIX
 * SOCK_STREAM socketpairs, futexes, barriers and counters.
 *
 * Each object models the blocking and wakeup rules of its kernel counterpart
 * (which wait queue a task sleeps on, exclusive or not, which event wakes it,
 * with or without WF_SYNC) and none of its data: only byte counts move.
 *
 * A channel call is one *attempt* of a blocking syscall: it moves what it
 * can and either completes or queues the task on a wait queue and reports
 * that the task must sleep. When the task is woken, the caller (the system
 * call's state machine, task.h) makes the next attempt, the way the kernel loops
 * inside pipe_read()/pipe_write() after schedule() returns.
 *
 * A pipe's read()/write() hold pipe->mutex (mutex.h) around their work; the
 * syscall (workload/task.h) takes it after its entry cost and holds it for the
 * rest. Not modelled: the AF_UNIX sockets' locks (unix_state_lock, u->iolock,
 * the receive queue's spinlock), the wait-queue spinlocks, signals, O_NONBLOCK,
 * splice, packet mode, SCM rights, peer close.
 */
#include "sched/syscalls.h"
#include "workload/mutex.h"

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

namespace schedlab {

class syscalls;

/*
 * The wakees of a wake-all that its waker walks in time (lane wakepace).
 * kernel: kernel/sched/wait.c __wake_up_common(), 6.5 (sndrzt/linux-6.5 4f5cdb332210):
 * the waker's CPU calls each entry's wake function (pollwake() or
 * autoremove_wake_function() -> default_wake_function() -> try_to_wake_up()) in turn, under
 * the queue's spin_lock_irqsave(), dropping and retaking it after every
 * WAITQUEUE_WALK_BREAK_CNT + 1 entries (the bookmark, __wake_up_common_lock());
 * kernel/sched/core.c wake_up_q() does the same over a list collected first (a futex's or a
 * SysV semaphore's wakees, futex_wake() and do_semtimedop() after their locks are dropped),
 * preemptible between wakeups. So wakee i+1 is selected and enqueued only after wakee i's
 * try_to_wake_up() work, and wakee 1 may run while the walk goes on.
 * model: wait_queue::wake_up() given a walk wakes the first entry it takes at once and moves
 * the others, in order, here; the waker's task_context wakes one per step, after a burst of
 * the previous one's cost (task_context::walk_step(), task.cc). Differs: the entries waiting
 * here are off their wait queue already (the kernel's stay on it until woken; a second
 * waker would spin on the lock and find them later).
 */
struct wake_walk {
    /// kernel: WAITQUEUE_WALK_BREAK_CNT (kernel/sched/wait.c, 6.5)
    static constexpr int WAITQUEUE_WALK_BREAK_CNT = 64;
    struct entry {
        task_struct* p;
        int wake_flags;
        bool nopreempt; ///< its cost runs under the queue's lock (not a wake_up_q() walk)
    };
    std::vector<entry> pending; ///< the wakees not yet woken, from `next` on
    std::size_t next = 0;
    bool active = false;    ///< a walk is in progress (its last wakee's cost may be unpaid)
    bool nopreempt = false; ///< the cost of the wakee woken last runs under the lock
    void reset()
    {
        pending.clear();
        next = 0;
        active = false;
        nopreempt = false;
    }
};

/*
 * model: include/linux/wait.h struct wait_queue_head with
 * autoremove_wake_function entries. Differs: every entry is removed when its
 * task is woken (the kernel keeps poll entries until poll returns; a second
 * wakeup of an already running task is a no-op there, so only its cost differs).
 * The kernel's entries live in the waiters' stack frames and are linked into the
 * head's list, so a wait allocates nothing; here they are a vector that keeps its
 * capacity, in reverse (the queue's head is the vector's back), so that add() and the
 * wakeup walk, the common pair, touch only its end and allocate nothing either.
 */
class wait_queue {
public:
    /// kernel: add_wait_queue() / prepare_to_wait(): a non-exclusive entry at the head.
    void add(task_struct& p);
    /// kernel: add_wait_queue_exclusive() (wait_event_*_exclusive()): an entry at the tail.
    void add_exclusive(task_struct& p);
    /*
     * A non-exclusive entry at the tail (list_add_tail()), so that a wake-all wakes it after
     * every entry queued before it: the first to wait is woken first. kernel: ipc/sem.c
     * do_semtimedop() queues a single-semaphore wait-for-zero semop with list_add_tail()
     * on the semaphore's pending_const list, which wake_const_ops() walks from its head.
     */
    void add_tail(task_struct& p);
    /*
     * kernel: kernel/sched/wait.c __wake_up_common(), 6.6: walks the queue from
     * the head and wakes every non-exclusive entry and up to nr_exclusive
     * exclusive ones (nr_exclusive <= 0: all). Returns the number of tasks woken.
     * With `walk`, only the first is woken now and the others are left to the walk
     * (struct wake_walk), which the waker goes on with in time; `wake_q`: the walk is
     * wake_up_q()'s over the entries (preemptible), not a wait queue's under its lock.
     */
    int wake_up(syscalls& sys, int nr_exclusive, int wake_flags, wake_walk* walk = nullptr,
                bool wake_q = false);
    int wake_up_all(syscalls& sys, int wake_flags, wake_walk* walk = nullptr, bool wake_q = false)
    {
        return wake_up(sys, 0, wake_flags, walk, wake_q);
    }

    /// kernel: remove_wait_queue() / finish_wait(): drops p's entry if present.
    bool remove(const task_struct& p);
    /// kernel: wq_has_sleeper().
    bool has_sleeper() const { return !entries_.empty(); }
    std::size_t size() const { return entries_.size(); }
    bool contains(const task_struct& p) const;

    u64 nr_wake_calls() const { return nr_wake_calls_; } ///< wake_up() invocations
    u64 nr_woken() const { return nr_woken_; }           ///< tasks woken in total

private:
    struct entry {
        task_struct* p;
        bool exclusive;
    };
    std::vector<entry> entries_; ///< the queue from its tail (front) to its head (back)
    void insert_tail(task_struct& p, bool exclusive); // list_add_tail()
    u64 nr_wake_calls_ = 0;
    u64 nr_woken_ = 0;
};

/// The progress of one blocking read()/write() syscall across its attempts.
struct io_call {
    u64 want = 0;        ///< bytes the syscall asks for
    u64 done = 0;        ///< bytes moved by this syscall so far
    bool waited = false; ///< the task has slept inside this syscall
    bool eof = false;    ///< read: end of file (the writing side closed, nothing queued)
    int nr_woken = 0;    ///< tasks woken by this syscall (the caller charges costs().wakeup each)
    wake_walk* walk = nullptr; ///< the caller's walk for the call's wake-alls (nullptr: at once)
};

/// Copy cost of `bytes` (copy_{from,to}_user) under the cost parameters.
sim_dur copy_cost(const cost_params& c, u64 bytes);

struct channel_stats {
    u64 bytes_written = 0;
    u64 bytes_read = 0;
    u64 writes = 0;        ///< completed write() syscalls
    u64 reads = 0;         ///< completed read() syscalls (short ones included)
    u64 writer_sleeps = 0; ///< times a writer went to sleep for room
    u64 reader_sleeps = 0; ///< times a reader or poller went to sleep for data
    u64 max_bytes_queued = 0;
    u64 line_transfers = 0; ///< cache lines of the channel fetched from another CPU
};

/// A byte channel with the blocking behaviour of a kernel file (pipe, socket).
class channel {
public:
    explicit channel(std::string name) : name_(std::move(name)) {}
    virtual ~channel() = default;
    channel(const channel&) = delete;
    channel& operator=(const channel&) = delete;

    /// One attempt of a blocking write(): true when all c.want bytes are written;
    /// false when p has been queued on a wait queue and must sleep.
    virtual bool write(syscalls& sys, task_struct& p, io_call& c) = 0;
    /// One attempt of a blocking read(): true when at least one byte was read
    /// (short reads complete); false when p has been queued and must sleep.
    virtual bool read(syscalls& sys, task_struct& p, io_call& c) = 0;
    /*
     * The bytes the next read() attempt would copy now (at most c.want - c.done): 0 when it
     * would sleep or is at end of file. No side effects: calls::read looks before the copy
     * (the kernel's read paths copy only once they have found data, after any wait) and
     * charges the copy for these bytes, then makes the attempt for them.
     */
    virtual u64 read_ready(const io_call& c) const = 0;
    /// One attempt of poll(POLLIN): true if readable; otherwise p has been queued
    /// (non-exclusive, like __pollwait()) and must sleep.
    virtual bool poll(syscalls& sys, task_struct& p) = 0;

    /// Fixed CPU cost of one write()/read() syscall on this kind of file.
    virtual sim_dur write_cost(const cost_params& c) const = 0;
    virtual sim_dur read_cost(const cost_params& c) const = 0;
    /// The whole CPU cost of a write()/read() of `bytes`: the fixed cost plus
    /// the copy; a channel whose kernel path does more per byte (e.g. the
    /// loopback receive path of a TCP send, net.h) overrides these.
    virtual sim_dur write_syscall_cost(const cost_params& c, u64 bytes) const
    {
        return write_cost(c) + copy_cost(c, bytes);
    }
    virtual sim_dur read_syscall_cost(const cost_params& c, u64 bytes) const
    {
        return read_cost(c) + copy_cost(c, bytes);
    }
    /// A recv(MSG_TRUNC) consumes the bytes without copying them to user space (TCP's
    /// tcp_recvmsg_locked()): calls::read charges it read_cost() alone. false: such a read
    /// copies as read() does (UDP's udp_recvmsg() copies up to the buffer and only reports
    /// the datagram's length; the other channels' paths were not read for it).
    virtual bool discards_truncated() const { return false; }
    /// The sleeping mutex a read()/write() holds around its work (pipe->mutex);
    /// nullptr: none modelled (the call is one burst, its effect at the end).
    virtual mutex* io_mutex() { return nullptr; }
    /// The part of write_syscall_cost()/read_syscall_cost() spent holding io_mutex().
    virtual sim_dur write_locked_cost(const cost_params&, u64) const { return 0; }
    virtual sim_dur read_locked_cost(const cost_params&, u64) const { return 0; }
    /*
     * The last writer closes its end (close() / shutdown(SHUT_WR)): readers
     * and pollers are woken and, once the queued bytes are read, read()
     * returns 0 (io_call::eof). Returns the number of tasks woken.
     */
    virtual int close_write(syscalls& sys, wake_walk* walk = nullptr);
    bool write_closed() const { return write_closed_; }
    /// Bytes written and not yet read.
    virtual u64 bytes_queued() const = 0;

    wait_queue& rd_wait() { return rd_wait_; }
    wait_queue& wr_wait() { return wr_wait_; }
    const wait_queue& rd_wait() const { return rd_wait_; }
    const wait_queue& wr_wait() const { return wr_wait_; }
    const std::string& name() const { return name_; }
    const channel_stats& stats() const { return stats_; }

protected:
    void note_queued()
    {
        if (bytes_queued() > stats_.max_bytes_queued)
            stats_.max_bytes_queued = bytes_queued();
    }

    /// read(): true (and c.eof) when nothing is queued and the writer has closed.
    bool at_eof(io_call& c) const
    {
        if (!write_closed_ || bytes_queued() > 0)
            return false;
        c.eof = true;
        return true;
    }

    /// model: `lines` lines of the channel's shared state come to p's CPU if another
    /// CPU used them last (by distance, line_*); a CPU's own lines cost nothing.
    void pull_state_lines(syscalls& sys, const task_struct& p, u64 lines);
    /// model: p reads `lines` lines of data written on `cpu` when its core's traffic
    /// was `stamp` (kernel::data_lines_cost()); pays and counts them if they move.
    void pull_data_lines(syscalls& sys, const task_struct& p, int cpu, u64 stamp, u64 lines);

    std::string name_;
    bool write_closed_ = false;
    wait_queue rd_wait_; ///< readers and POLLIN pollers
    wait_queue wr_wait_; ///< writers waiting for room
    channel_stats stats_;
    int state_cpu_ = -1; ///< the CPU whose caches hold the shared state lines
};

/*
 * kernel: fs/pipe.c pipe_write()/pipe_read()/pipe_poll(), 5.5+ (checked
 * against 6.6): a ring of PIPE_DEF_BUFFERS = 16 page-sized buffers; a write
 * merges its sub-page tail into the last buffer when the pipe is not empty and
 * it fits, else takes new buffers; readers and writers sleep exclusively on
 * rd_wait / wr_wait; the reader is woken (WF_SYNC) only when the write found
 * the pipe empty, or on every write once the pipe has been polled (poll_usage);
 * a reader that found the pipe full wakes one writer (WF_SYNC); a writer or
 * reader that had to wait wakes the next one when it leaves with room/data left.
 * model: the pipe's shared state moves between CPUs as cache lines: an
 * attempt on a CPU other than the pipe's last user pays the transfer (by
 * distance) of the lines it touches: the mutex, head/tail with the wait-queue
 * heads, the pipe_buffer slot and struct page (PIPE_STATE_LINES). The data
 * stays where it was written: a read pays one line per 64 bytes copied out of
 * a buffer written on another CPU, or written so long ago that the writer's
 * private caches lost it (kernel::data_lines_cost()); a write merging into
 * the tail of a buffer last written elsewhere pays for that tail line.
 * pipe->mutex (mutex.h: spinning while its owner runs, the wait list, the
 * hand-off): pipe_write()/pipe_read() take it first (after the syscall's entry)
 * and drop it before their wakeups (6.x: mutex_unlock() then
 * wake_up_interruptible_sync_poll()), and drop it before sleeping on
 * rd_wait/wr_wait; woken, they take it again. The hold is the copy plus
 * pipe_lock_pct of pipe_write/pipe_read (the rest is the syscall's entry and
 * exit); a write that retries after a wait holds it for no modelled time (its
 * copy was charged with the first attempt); a read copies only once it has found
 * data (pipe_read(), v6.5), so a woken reader holds it for its copy (calls::read,
 * task.cc). Differs: a woken reader or writer
 * re-checks pipe_readable()/pipe_writable() under the mutex (the kernel checks
 * them locklessly in wait_event_interruptible_exclusive(), then locks);
 * pipe_release() and pipe_poll() take no modelled lock (pipe_poll() takes none).
 */
class pipe_channel final : public channel {
public:
    static constexpr u64 PAGE_SIZE = 4096;
    static constexpr u32 PIPE_DEF_BUFFERS = 16;
    static constexpr u64 PIPE_STATE_LINES = 4;

    explicit pipe_channel(std::string name, u32 max_usage = PIPE_DEF_BUFFERS)
        : channel(std::move(name)), max_usage_(max_usage)
    {
    }

    bool write(syscalls& sys, task_struct& p, io_call& c) override;
    bool read(syscalls& sys, task_struct& p, io_call& c) override;
    bool poll(syscalls& sys, task_struct& p) override;
    /// kernel: pipe_read() copies across the buffers until it has total_len or the pipe is empty.
    u64 read_ready(const io_call& c) const override { return std::min(c.want - c.done, bytes_); }
    sim_dur write_cost(const cost_params& c) const override { return c.pipe_write; }
    sim_dur read_cost(const cost_params& c) const override { return c.pipe_read; }
    u64 bytes_queued() const override { return bytes_; }
    mutex* io_mutex() override { return &mutex_; }
    sim_dur write_locked_cost(const cost_params& c, u64 bytes) const override
    {
        return c.pipe_write * c.pipe_lock_pct / 100 + copy_cost(c, bytes);
    }
    sim_dur read_locked_cost(const cost_params& c, u64 bytes) const override
    {
        return c.pipe_read * c.pipe_lock_pct / 100 + copy_cost(c, bytes);
    }
    const mutex& pipe_mutex() const { return mutex_; }

    /// kernel: pipe_empty() / pipe_full(): occupied buffer slots vs max_usage.
    bool empty() const { return bufs_.empty(); }
    bool full() const { return bufs_.size() >= max_usage_; }
    std::size_t nr_buffers() const { return bufs_.size(); }
    u32 max_usage() const { return max_usage_; }

private:
    struct pipe_buffer {
        u64 offset;
        u64 len;
        int cpu;   ///< the CPU that last wrote into it
        u64 stamp; ///< kernel::data_stamp() of that CPU then
    };
    std::deque<pipe_buffer> bufs_; ///< tail (oldest) at the front, head at the back
    u64 bytes_ = 0;
    u32 max_usage_;
    bool poll_usage_ = false; ///< kernel: pipe->poll_usage, set by the first poll()
    mutex mutex_;             ///< kernel: pipe->mutex

    /// mutex_unlock(&pipe->mutex) if p holds it (a caller outside a syscall may not):
    /// the number of tasks woken.
    int unlock(syscalls& sys, task_struct& p) { return mutex_.owner() == &p ? mutex_.unlock(sys, p) : 0; }

    bool do_write(syscalls& sys, task_struct& p, io_call& c);
    bool do_read(syscalls& sys, task_struct& p, io_call& c);
};

/// Model parameters of an AF_UNIX SOCK_STREAM socket (model: Linux defaults, estimates below).
struct unix_stream_params {
    /// kernel: sk->sk_sndbuf, default net.core.wmem_default = 212992 bytes.
    u64 sk_sndbuf = 212'992;
    /// model: skb truesize = ALIGN(len, skb_data_align) + skb_overhead: sk_buff
    /// plus skb_shared_info plus the kmalloc bucket rounding, ~0.9 KiB for a
    /// 100-byte message (estimate: 0.75-1.3 KiB by kmalloc bucket).
    u64 skb_overhead = 768;
    u64 skb_data_align = 64; ///< SMP_CACHE_BYTES
    /// kernel: unix_stream_sendmsg() caps each skb at SKB_MAX_HEAD(0) + UNIX_SKB_FRAGS_SZ
    /// ("allow fallback to order-0 allocations", net/unix/af_unix.c; in the 6.5 and 6.6.87
    /// trees lane pvaudit read, docs/kernels.md "Where each modelled call meets a preemption
    /// point"): a page less SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) of linear head, plus 32
    /// KiB of page frags. model: 4096 - 320 + 32768; 320 bytes is skb_shared_info on x86-64 with
    /// MAX_SKB_FRAGS 17, estimated from the struct's fields, not read from a build (the cap
    /// moves by a cache line with it).
    u64 skb_max = 4096 - 320 + 32'768;
};

/*
 * One direction of an AF_UNIX SOCK_STREAM socketpair: the writers hold the
 * sending socket, the reader the peer socket.
 * kernel: net/unix/af_unix.c unix_stream_sendmsg() / unix_stream_read_generic(),
 * net/core/sock.c sock_alloc_send_pskb() / sock_wfree() / sock_def_readable(), 6.6:
 * every write of n bytes (n <= min(sk_sndbuf/2 - 64, skb_max)) is one skb charged to the
 * sender's sk_wmem_alloc with its truesize; a writer may allocate while
 * sk_wmem_alloc < sk_sndbuf, else it sleeps (non-exclusive, prepare_to_wait) on
 * the sending socket's wait queue; every queued skb calls sk_data_ready, which
 * wakes the peer's sleepers with WF_SYNC if it has any (wq_has_sleeper); the
 * reader copies across skbs up to its buffer, and each fully consumed skb
 * calls unix_write_space, which wakes all the sender's sleepers (WF_SYNC) once
 * sk_wmem_alloc * 4 <= sk_sndbuf (unix_writable()).
 * model: larger writes are split into skbs of at most min(sk_sndbuf/2 - 64, skb_max)
 * bytes, as the kernel splits them, each charged as one linear buffer (no page frags); no
 * receive-queue limit, no MSG_WAITALL, no socket lock. Cache lines, as for the pipe: a write or
 * read on a CPU other than the socket pair's last user pulls its shared state (UNIX_STATE_LINES:
 * the receive queue's head and lock, the peer's wait queue, the sender's
 * sk_wmem_alloc); a read of an skb pulls the skb's own lines (SKB_LINES: list
 * links, len/data and UNIXCB, the shared info's refcount that consume_skb()
 * drops) and one line per 64 bytes copied, when it was written on another CPU
 * or so long ago that the writer's private caches lost it
 * (kernel::data_lines_cost()).
 */
class unix_stream_channel final : public channel {
public:
    static constexpr u64 UNIX_STATE_LINES = 4;
    static constexpr u64 SKB_LINES = 3;

    explicit unix_stream_channel(std::string name, unix_stream_params params = {})
        : channel(std::move(name)), params_(params)
    {
    }

    bool write(syscalls& sys, task_struct& p, io_call& c) override;
    bool read(syscalls& sys, task_struct& p, io_call& c) override;
    bool poll(syscalls& sys, task_struct& p) override;
    /// kernel: unix_stream_read_generic() copies skb after skb while `size` is left.
    u64 read_ready(const io_call& c) const override { return std::min(c.want - c.done, bytes_); }
    sim_dur write_cost(const cost_params& c) const override { return c.socket_send; }
    sim_dur read_cost(const cost_params& c) const override { return c.socket_recv; }
    u64 bytes_queued() const override { return bytes_; }

    u64 sk_wmem_alloc() const { return wmem_alloc_; }
    std::size_t nr_skbs() const { return skbs_.size(); }
    u64 truesize(u64 len) const;
    const unix_stream_params& params() const { return params_; }

private:
    struct skb {
        u64 len;      ///< bytes not yet consumed
        u64 truesize; ///< charged to the sender's sk_wmem_alloc until freed
        int cpu;      ///< where it was written: its lines are in that CPU's caches
        u64 stamp;    ///< kernel::data_stamp() of that CPU then
        bool pulled = false; ///< its lines came to the reader's CPU already
    };
    bool writable() const { return wmem_alloc_ * 4 <= params_.sk_sndbuf; } ///< unix_writable()

    unix_stream_params params_;
    std::deque<skb> skbs_; ///< the peer's sk_receive_queue
    u64 bytes_ = 0;
    u64 wmem_alloc_ = 0;
};

/*
 * model: a futex word and its hash-bucket waiters (kernel/futex/waitwake.c
 * futex_wait()/futex_wake(), 6.6). futex_wait sleeps only if the word still
 * holds the expected value; futex_wake wakes up to nr waiters in FIFO order
 * (all waiters share one priority) without WF_SYNC (wake_up_q()). No PI, no
 * requeue, no bitset; a woken waiter returns (no spurious wakeups).
 */
struct futex {
    std::string name;
    u32 val = 0;
    wait_queue waiters;
};

/*
 * model: a pthread_barrier_t built on a futex: the last of `parties`
 * arrivals starts a new generation and wakes every waiter (futex_wake(INT_MAX)).
 */
struct barrier {
    std::string name;
    u32 parties = 1;
    u32 arrived = 0;
    u64 generation = 0;
    wait_queue waiters;
};

/*
 * model: an event count with waiters (a parent's wait_chldexit queue, a
 * pthread_join futex, a semaphore): signal adds one and wakes every waiter,
 * which re-checks its target. wake_flags: WF_SYNC for __wake_up_parent()
 * (process exit), 0 for the CLONE_CHILD_CLEARTID futex wake (thread exit).
 * fifo: waiters are woken in the order they began to wait (a SysV semaphore's
 * wait-for-zero queue: ipc/sem.c wake_const_ops() walks pending_const from its
 * head and wake_up_q() wakes in the order queued, each with try_to_wake_up(p,
 * TASK_NORMAL, 0)); otherwise the last to wait is woken first (a wait queue's
 * add_wait_queue() puts each entry at the head).
 */
struct counter {
    std::string name;
    u64 value = 0;
    int wake_flags = 0;
    bool fifo = false;
    /// The wake-all is wake_up_q()'s (a futex or SysV semaphore: preemptible between
    /// wakeups), not a wait queue's under its lock (wait_chldexit, an accept queue).
    bool wake_q = false;
    wait_queue waiters;
};

} // namespace schedlab
