// SPDX-License-Identifier: GPL-2.0-only
/*
 * Wait queues, pipes and AF_UNIX stream sockets: the blocking and wakeup
 * rules of fs/pipe.c and net/unix/af_unix.c, without the data.
 */
#include "workload/channel.h"

#include "sched/syscalls.h"
#include "sim/bug.h"

#include <algorithm>

namespace schedlab {

/* ------------------------------------------------------------------------ */
/* wait_queue                                                                 */

void wait_queue::add(task_struct& p)
{
    SIM_BUG_ON(contains(p), "pid {} ({}) queued twice on one wait queue", p.pid, p.comm);
    entries_.push_back({&p, false}); // list_add(): at the head
}

void wait_queue::add_exclusive(task_struct& p) { insert_tail(p, true); }

void wait_queue::add_tail(task_struct& p) { insert_tail(p, false); }

void wait_queue::insert_tail(task_struct& p, bool exclusive)
{
    SIM_BUG_ON(contains(p), "pid {} ({}) queued twice on one wait queue", p.pid, p.comm);
    entries_.insert(entries_.begin(), {&p, exclusive}); // list_add_tail(): at the tail
}

bool wait_queue::contains(const task_struct& p) const
{
    return std::any_of(entries_.begin(), entries_.end(), [&](const entry& e) { return e.p == &p; });
}

bool wait_queue::remove(const task_struct& p)
{
    const auto it = std::find_if(entries_.begin(), entries_.end(),
                                 [&](const entry& e) { return e.p == &p; });
    if (it == entries_.end())
        return false;
    entries_.erase(it);
    return true;
}

int wait_queue::wake_up(syscalls& sys, int nr_exclusive, int wake_flags, wake_walk* walk,
                        bool wake_q)
{
    ++nr_wake_calls_;
    int woken = 0;
    int taken = 0;
    // Every visited entry is woken and (autoremove) dequeued, so the walk
    // always takes the head; it stops after the nr_exclusive-th exclusive one.
    while (!entries_.empty()) {
        const entry e = entries_.back();
        entries_.pop_back();
        ++taken;
        if (walk && (taken > 1 || walk->active)) { // after the walk in progress, if any
            // __wake_up_common_lock(): the lock is dropped after every
            // WAITQUEUE_WALK_BREAK_CNT + 1 entries; the cost of the last one before it is
            // preemptible (the preemption point the unlock is comes before that cost).
            const bool unlock_after = taken % (wake_walk::WAITQUEUE_WALK_BREAK_CNT + 1) == 0;
            walk->pending.push_back({e.p, wake_flags, !wake_q && !unlock_after});
        } else {
            const bool ok = sys.try_to_wake_up(*e.p, TASK_NORMAL, wake_flags);
            SIM_BUG_ON(!ok, "pid {} ({}) was on a wait queue but not asleep (state {:#x})",
                       e.p->pid, e.p->comm, e.p->__state);
            ++woken;
        }
        if (e.exclusive && nr_exclusive > 0 && --nr_exclusive == 0)
            break;
    }
    if (walk && taken > 1 && !walk->active) {
        walk->active = true;
        walk->nopreempt = !wake_q; // the first wakee's cost, under the lock
    }
    nr_woken_ += static_cast<u64>(taken);
    return woken;
}

/* ------------------------------------------------------------------------ */
/* channel                                                                    */

sim_dur copy_cost(const cost_params& c, u64 bytes)
{
    return static_cast<sim_dur>((bytes * static_cast<u64>(c.copy_per_kib) + 1023) / 1024);
}

/*
 * model: the release of the last writer's file: pipe_release() wakes rd_wait
 * (and poll waiters) so readers see EOF; for sockets, the FIN reaching the
 * peer (tcp_fin() -> sk_data_ready / sk_state_change) does the same.
 */
int channel::close_write(syscalls& sys, wake_walk* walk)
{
    if (write_closed_)
        return 0;
    write_closed_ = true;
    return rd_wait_.wake_up_all(sys, 0, walk);
}

void channel::pull_state_lines(syscalls& sys, const task_struct& p, u64 lines)
{
    if (state_cpu_ >= 0 && state_cpu_ != p.cpu) {
        sys.pull_lines(p, state_cpu_, lines);
        stats_.line_transfers += lines;
    }
    state_cpu_ = p.cpu;
}

void channel::pull_data_lines(syscalls& sys, const task_struct& p, int cpu, u64 stamp, u64 lines)
{
    if (sys.pull_data_lines(p, cpu, stamp, lines))
        stats_.line_transfers += lines;
}

/* ------------------------------------------------------------------------ */
/* pipe                                                                       */

bool pipe_channel::write(syscalls& sys, task_struct& p, io_call& c)
{
    pull_state_lines(sys, p, PIPE_STATE_LINES);
    return do_write(sys, p, c);
}

bool pipe_channel::read(syscalls& sys, task_struct& p, io_call& c)
{
    pull_state_lines(sys, p, PIPE_STATE_LINES);
    return do_read(sys, p, c);
}

// kernel: fs/pipe.c pipe_write(), 6.6 (blocking mode; see the class comment).
bool pipe_channel::do_write(syscalls& sys, task_struct& p, io_call& c)
{
    if (c.waited && full()) {
        // Still inside wait_event_interruptible_exclusive(): the condition
        // pipe_writable() is re-checked and the writer sleeps again, no side effects.
        c.nr_woken += unlock(sys, p);
        wr_wait_.add_exclusive(p);
        ++stats_.writer_sleeps;
        return false;
    }
    const bool was_empty = empty(); // recomputed after each wait, as the kernel does
    u64 left = c.want - c.done;

    // A sub-page tail is merged into the last buffer on the first pass only
    // (kernel: "chars = total_len & (PAGE_SIZE-1)" before the main loop).
    if (!c.waited && c.done == 0 && !was_empty) {
        const u64 chars = left % PAGE_SIZE;
        pipe_buffer& last = bufs_.back();
        if (chars && last.offset + last.len + chars <= PAGE_SIZE) {
            // The tail line of the buffer comes over if another CPU wrote it.
            pull_data_lines(sys, p, last.cpu, last.stamp, 1);
            last.cpu = p.cpu;
            last.stamp = sys.data_stamp(p.cpu);
            sys.data_touch(p.cpu, chars);
            last.len += chars;
            bytes_ += chars;
            stats_.bytes_written += chars;
            c.done += chars;
            left -= chars;
        }
    }
    while (left > 0) {
        if (full()) {
            // Release the pipe, wake the reader if we made the pipe non-empty, sleep.
            c.nr_woken += unlock(sys, p);
            if (was_empty)
                c.nr_woken += rd_wait_.wake_up(sys, 1, WF_SYNC, c.walk);
            wr_wait_.add_exclusive(p);
            c.waited = true;
            ++stats_.writer_sleeps;
            note_queued();
            return false;
        }
        const u64 chunk = std::min(PAGE_SIZE, left);
        bufs_.push_back({0, chunk, p.cpu, sys.data_stamp(p.cpu)});
        sys.data_touch(p.cpu, chunk);
        bytes_ += chunk;
        stats_.bytes_written += chunk;
        c.done += chunk;
        left -= chunk;
    }
    ++stats_.writes;
    note_queued();

    const bool wake_next_writer = c.waited && !full();
    c.nr_woken += unlock(sys, p); // mutex_unlock() before the wakeups
    if (was_empty || poll_usage_)
        c.nr_woken += rd_wait_.wake_up(sys, 1, WF_SYNC, c.walk);
    if (wake_next_writer)
        c.nr_woken += wr_wait_.wake_up(sys, 1, WF_SYNC, c.walk);
    return true;
}

// kernel: fs/pipe.c pipe_read(), 6.6 (blocking mode; see the class comment).
bool pipe_channel::do_read(syscalls& sys, task_struct& p, io_call& c)
{
    if (at_eof(c)) {
        c.nr_woken += unlock(sys, p);
        return true; // no writers left: read() returns 0
    }
    if (empty()) {
        // mutex_unlock(), then wait_event_interruptible_exclusive(pipe->rd_wait, pipe_readable(pipe))
        c.nr_woken += unlock(sys, p);
        rd_wait_.add_exclusive(p);
        c.waited = true;
        ++stats_.reader_sleeps;
        return false;
    }
    const bool was_full = full();
    while (c.done < c.want && !bufs_.empty()) {
        pipe_buffer& buf = bufs_.front();
        const u64 chars = std::min(buf.len, c.want - c.done);
        const u64 first_line = buf.offset / 64, end_line = (buf.offset + chars + 63) / 64;
        pull_data_lines(sys, p, buf.cpu, buf.stamp, end_line - first_line);
        if (buf.cpu != p.cpu)
            sys.data_touch(p.cpu, chars);
        buf.offset += chars;
        buf.len -= chars;
        bytes_ -= chars;
        c.done += chars;
        if (buf.len == 0)
            bufs_.pop_front(); // pipe_buf_release(); pipe->tail++
    }
    stats_.bytes_read += c.done;
    ++stats_.reads;

    const bool wake_next_reader = c.waited && !empty();
    c.nr_woken += unlock(sys, p); // mutex_unlock() before the wakeups
    if (was_full)
        c.nr_woken += wr_wait_.wake_up(sys, 1, WF_SYNC, c.walk);
    if (wake_next_reader)
        c.nr_woken += rd_wait_.wake_up(sys, 1, WF_SYNC, c.walk);
    return true;
}

// kernel: fs/pipe.c pipe_poll(), 6.6: registers on rd_wait and sets poll_usage.
bool pipe_channel::poll(syscalls& sys, task_struct& p)
{
    (void)sys;
    poll_usage_ = true;
    if (!empty() || write_closed_)
        return true;
    rd_wait_.add(p);
    ++stats_.reader_sleeps;
    return false;
}

/* ------------------------------------------------------------------------ */
/* AF_UNIX SOCK_STREAM                                                        */

u64 unix_stream_channel::truesize(u64 len) const
{
    const u64 a = params_.skb_data_align;
    return (len + a - 1) / a * a + params_.skb_overhead;
}

// kernel: net/unix/af_unix.c unix_stream_sendmsg(), 6.6 (see the class comment).
bool unix_stream_channel::write(syscalls& sys, task_struct& p, io_call& c)
{
    pull_state_lines(sys, p, UNIX_STATE_LINES);
    // "Keep two messages in the pipe so it schedules better", then the order-0 fallback's cap.
    const u64 max_skb =
        std::min(params_.sk_sndbuf / 2 > 64 ? params_.sk_sndbuf / 2 - 64 : 1, params_.skb_max);
    while (c.done < c.want) {
        // sock_alloc_send_pskb(): allocation succeeds while sk_wmem_alloc < sk_sndbuf.
        if (wmem_alloc_ >= params_.sk_sndbuf) {
            wr_wait_.add(p); // sock_wait_for_wmem(): prepare_to_wait(), non-exclusive
            c.waited = true;
            ++stats_.writer_sleeps;
            return false;
        }
        const u64 len = std::min(max_skb, c.want - c.done);
        const u64 ts = truesize(len);
        wmem_alloc_ += ts;
        skbs_.push_back({len, ts, p.cpu, sys.data_stamp(p.cpu)});
        sys.data_touch(p.cpu, ts);
        bytes_ += len;
        c.done += len;
        stats_.bytes_written += len;
        note_queued();
        // other->sk_data_ready(other): sock_def_readable()
        if (rd_wait_.has_sleeper())
            c.nr_woken += rd_wait_.wake_up(sys, 1, WF_SYNC, c.walk);
    }
    ++stats_.writes;
    return true;
}

// kernel: net/unix/af_unix.c unix_stream_read_generic(), 6.6 (see the class comment).
bool unix_stream_channel::read(syscalls& sys, task_struct& p, io_call& c)
{
    if (at_eof(c))
        return true;
    pull_state_lines(sys, p, UNIX_STATE_LINES);
    if (skbs_.empty()) {
        rd_wait_.add(p); // unix_stream_data_wait(): prepare_to_wait(), non-exclusive
        c.waited = true;
        ++stats_.reader_sleeps;
        return false;
    }
    while (c.done < c.want && !skbs_.empty()) {
        skb& s = skbs_.front();
        const u64 chunk = std::min(s.len, c.want - c.done);
        if (!s.pulled) {
            pull_data_lines(sys, p, s.cpu, s.stamp, SKB_LINES + (s.len + 63) / 64);
            if (s.cpu != p.cpu)
                sys.data_touch(p.cpu, s.truesize);
            s.pulled = true;
        }
        s.len -= chunk;
        bytes_ -= chunk;
        c.done += chunk;
        stats_.bytes_read += chunk;
        if (s.len == 0) {
            // consume_skb() -> sock_wfree() -> sk_write_space() = unix_write_space()
            wmem_alloc_ -= s.truesize;
            skbs_.pop_front();
            if (writable() && wr_wait_.has_sleeper())
                c.nr_woken += wr_wait_.wake_up(sys, 1, WF_SYNC, c.walk);
        }
    }
    ++stats_.reads;
    return true;
}

// kernel: net/unix/af_unix.c unix_poll(), 6.6: sock_poll_wait() on the peer's queue.
bool unix_stream_channel::poll(syscalls& sys, task_struct& p)
{
    (void)sys;
    if (!skbs_.empty() || write_closed_)
        return true;
    rd_wait_.add(p);
    ++stats_.reader_sleeps;
    return false;
}

} // namespace schedlab
