// SPDX-License-Identifier: GPL-2.0-only
/*
 * rt-app JSON workloads: see rt_app.h.
 */
#include "workload/rt_app.h"

#include "sched/syscalls.h"
#include "sim/bug.h"
#include "sim/config_error.h"
#include "workload/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>

namespace schedlab {

/* ------------------------------------------------------------------------ */
/* parsing                                                                    */

namespace {

struct parse_ctx {
    const std::string& file;
    rtapp_config& cfg;
    bool downgrade; ///< --downgrade-unmodelled
    std::set<std::string> warned;

    std::string at(int line, int col) const { return fmt::format("{}:{}:{}", file, line, col); }
    [[noreturn]] void fail(const rtj_member& m, const std::string& what) const
    {
        throw config_error(at(m.value->line ? m.value->line : m.line,
                              m.value->line ? m.value->col : m.col),
                           what);
    }
    [[noreturn]] void fail_key(const rtj_member& m, const std::string& what) const
    {
        throw config_error(at(m.line, m.col), what);
    }
    /// One warning per distinct `what` (usually the key), naming where it was first seen.
    void warn(const std::string& id, const rtj_member& m, const std::string& why)
    {
        if (!warned.insert(id).second)
            return;
        cfg.warnings.push_back(fmt::format("{}: warning: {} ignored: {}", at(m.line, m.col), id, why));
    }

    /*
     * A scheduling request the model cannot honour (`id`, because `why`): an error naming
     * it, or with --downgrade-unmodelled a warning saying what runs instead (`instead`).
     */
    void unmodelled(const std::string& id, const rtj_member& m, const std::string& why,
                    const std::string& instead)
    {
        if (!downgrade)
            fail_key(m, fmt::format("{} is not modelled ({}); --downgrade-unmodelled runs the "
                                    "file with it ignored ({})",
                                    id, why, instead));
        if (!warned.insert(id).second)
            return;
        cfg.warnings.push_back(fmt::format("{}: warning: {} downgraded (--downgrade-unmodelled): "
                                           "{}; {}",
                                           at(m.line, m.col), id, why, instead));
    }

    long long integer(const rtj_member& m, long long lo, long long hi) const
    {
        const rtj_value& v = *m.value;
        if (v.kind != rtj_value::number || !v.is_integer)
            fail(m, fmt::format("'{}' expects an integer, not {}", m.key, v.kind_name()));
        if (v.integer < lo || v.integer > hi)
            fail(m, fmt::format("'{}': {} is out of range [{}, {}]", m.key, v.integer, lo, hi));
        return v.integer;
    }
    const std::string& string(const rtj_member& m) const
    {
        if (m.value->kind != rtj_value::string)
            fail(m, fmt::format("'{}' expects a string, not {}", m.key, m.value->kind_name()));
        return m.value->str;
    }
    const rtj_value& object(const rtj_member& m) const
    {
        if (m.value->kind != rtj_value::object)
            fail(m, fmt::format("'{}' expects an object, not {}", m.key, m.value->kind_name()));
        return *m.value;
    }
};

constexpr long long max_usec = 1'000'000'000'000LL; // 11.5 days, far beyond any use case

/// rt-app's event keys, matched by prefix in this order (so runtime before run, memrun before mem).
struct event_key {
    const char* prefix;
    rtapp_event::kind_t kind;
};
constexpr event_key event_keys[] = {
    {"lock", rtapp_event::lock},       {"unlock", rtapp_event::unlock},
    {"wait", rtapp_event::wait},       {"signal", rtapp_event::signal},
    {"broad", rtapp_event::broad},     {"sync", rtapp_event::sync},
    {"sleep", rtapp_event::sleep},     {"runtime", rtapp_event::runtime},
    {"run", rtapp_event::run},         {"timer", rtapp_event::timer},
    {"suspend", rtapp_event::suspend}, {"resume", rtapp_event::resume},
    {"memrun", rtapp_event::mem},      {"mem", rtapp_event::mem},
    {"iorun", rtapp_event::iorun},     {"yield", rtapp_event::yield},
    {"barrier", rtapp_event::barrier}, {"fork", rtapp_event::fork},
    {"sem_post", rtapp_event::sem_post}, {"sem_wait", rtapp_event::sem_wait},
};

const event_key* match_event(const std::string& key)
{
    for (const event_key& e : event_keys)
        if (key.compare(0, std::strlen(e.prefix), e.prefix) == 0)
            return &e;
    return nullptr;
}

int parse_policy(parse_ctx& c, const rtj_member& m, const std::string& p)
{
    if (p == "SCHED_OTHER" || p == "SCHED_NORMAL")
        return SCHED_NORMAL;
    if (p == "SCHED_BATCH")
        return SCHED_BATCH;
    if (p == "SCHED_IDLE")
        return SCHED_IDLE;
    if (p == "SCHED_FIFO")
        return SCHED_FIFO;
    if (p == "SCHED_RR")
        return SCHED_RR;
    if (p == "SCHED_DEADLINE")
        return SCHED_DEADLINE;
    c.fail(m, fmt::format("unknown policy '{}' (SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, "
                          "SCHED_RR, SCHED_DEADLINE)",
                          p));
}

/// A key that can appear in a task or a phase and is not an event; false if unknown.
bool sched_key(parse_ctx& c, const rtj_member& m, bool phase)
{
    // Scheduling requests the model cannot honour: errors unless --downgrade-unmodelled.
    static const char* unmodelled[][3] = {
        {"util_min", "no uclamp", "the thread has no utilisation clamp"},
        {"util_max", "no uclamp", "the thread has no utilisation clamp"},
        {"taskgroup", "no task groups (cgroups) yet", "the thread is in the root group"},
    };
    for (const auto& u : unmodelled) {
        if (m.key == u[0]) {
            c.unmodelled(fmt::format("'{}'", m.key), m, u[1], u[2]);
            return true;
        }
    }
    if (m.key == "nodes_membind") {
        c.warn(m.key, m, "memory placement is not modelled");
        return true;
    }
    if (phase && (m.key == "cpus" || m.key == "policy" || m.key == "priority" ||
                  m.key == "dl-runtime" || m.key == "dl-period" || m.key == "dl-deadline")) {
        c.unmodelled(fmt::format("phase-level '{}'", m.key), m,
                     "no change of affinity, policy, priority or reservation while running yet",
                     "the task-level value is kept");
        return true;
    }
    return false;
}

rtapp_event parse_event(parse_ctx& c, const rtj_member& m, const event_key& ek,
                        const std::string& task)
{
    rtapp_event e{ek.kind};
    e.key = m.key;
    e.line = m.line;
    const bool is_memrun = m.key.compare(0, 6, "memrun") == 0;
    if (m.bare && ek.kind != rtapp_event::suspend && ek.kind != rtapp_event::yield)
        c.fail_key(m, fmt::format("event '{}' has no value", m.key));
    switch (ek.kind) {
    case rtapp_event::run:
    case rtapp_event::runtime:
    case rtapp_event::sleep:
        e.ns = usecs(c.integer(m, 0, max_usec));
        break;
    case rtapp_event::mem:
        if (is_memrun) {
            // memrun {type, size, count, stride, pattern, ref}: modelled as its bytes' copy time.
            const rtj_value& o = c.object(m);
            long long size = 0;
            long long count = 1;
            for (const rtj_member& f : o.members) {
                if (f.key == "size")
                    size = c.integer(f, 0, 1LL << 40);
                else if (f.key == "count")
                    count = c.integer(f, 0, 1LL << 40);
            }
            c.warn("memrun", m, "modelled as the CPU time of copying size x count bytes");
            e.ref = std::to_string(size * count);
        } else {
            e.ref = std::to_string(c.integer(m, 0, 1LL << 40));
        }
        break;
    case rtapp_event::iorun:
        e.ref = std::to_string(c.integer(m, 0, 1LL << 40));
        break;
    case rtapp_event::timer: {
        const rtj_value& o = c.object(m);
        const rtj_member* ref = o.find("ref");
        const rtj_member* period = o.find("period");
        if (!ref || !period)
            c.fail(m, fmt::format("timer '{}' needs \"ref\" and \"period\"", m.key));
        e.ref = c.string(*ref);
        e.ns = usecs(c.integer(*period, 0, max_usec));
        if (const rtj_member* mode = o.find("mode")) {
            const std::string& md = c.string(*mode);
            if (md != "relative" && md != "absolute")
                c.fail(*mode, fmt::format("timer mode '{}' is not relative or absolute", md));
            e.absolute = md == "absolute";
        }
        if (e.ref.compare(0, 6, "unique") == 0)
            e.ref = task + "/" + e.ref; // resolved per thread instance at run time
        break;
    }
    case rtapp_event::wait:
    case rtapp_event::sync: {
        const rtj_value& o = c.object(m);
        const rtj_member* ref = o.find("ref");
        const rtj_member* mx = o.find("mutex");
        if (!ref || !mx)
            c.fail(m, fmt::format("'{}' needs \"ref\" and \"mutex\"", m.key));
        e.ref = c.string(*ref);
        e.mutex = c.string(*mx);
        break;
    }
    case rtapp_event::suspend:
        // rt-app 1.0: the condition to wait on; empty (workgen's bare key): the task's name.
        e.ref = m.value->kind == rtj_value::string && !m.value->str.empty() ? m.value->str : task;
        break;
    case rtapp_event::yield:
        break;
    default:
        e.ref = c.string(m);
        if (e.ref.empty())
            c.fail(m, fmt::format("'{}' needs a name", m.key));
        break;
    }
    return e;
}

/// The events of a task or phase object; the other keys go through `other`.
template <typename F>
std::vector<rtapp_event> parse_events(parse_ctx& c, const rtj_value& o, const std::string& task,
                                      F&& other, std::vector<std::string>* unknown = nullptr)
{
    std::vector<rtapp_event> evs;
    for (const rtj_member& m : o.members) {
        if (other(m))
            continue;
        if (const event_key* ek = match_event(m.key)) {
            evs.push_back(parse_event(c, m, *ek, task));
        } else {
            c.warn(fmt::format("key '{}'", m.key), m, "not an rt-app property or event");
            if (unknown)
                unknown->push_back(m.key);
        }
    }
    return evs;
}

/// "task 't1' has no event": and which keys were not understood, if any.
std::string no_event(const std::string& what, const std::vector<std::string>& unknown)
{
    if (unknown.empty())
        return fmt::format("{} has no event", what);
    std::string keys;
    for (const std::string& k : unknown)
        keys += fmt::format("{}'{}'", keys.empty() ? "" : ", ", k);
    return fmt::format("{} has no event ({} {} not an rt-app property or event)", what, keys,
                       unknown.size() == 1 ? "is" : "are");
}

/* The "global" object (its default_policy returned), "resources" and unknown top-level keys. */
int parse_global(parse_ctx& c, const rtj_value& root, rtapp_config& cfg)
{
    int default_policy = SCHED_NORMAL;
    if (const rtj_member* g = root.find("global")) {
        const rtj_value& go = c.object(*g);
        for (const rtj_member& m : go.members) {
            if (m.key == "duration") {
                const long long d = c.integer(m, -1, 1'000'000'000);
                cfg.duration = d <= 0 ? -1 : secs(d); // rt-app: -1 (and 0) run until the threads end
            } else if (m.key == "default_policy") {
                default_policy = parse_policy(c, m, c.string(m));
            } else if (m.key == "pi_enabled") {
                if (m.value->kind == rtj_value::boolean && m.value->b)
                    c.warn("global.pi_enabled", m, "priority inheritance is not modelled");
            } else if (m.key == "calibration") {
                c.warn("global.calibration", m,
                       "a run event is its duration of CPU time at full capacity");
            } else if (m.key == "logdir" || m.key == "log_basename" || m.key == "log_size" ||
                       m.key == "ftrace" || m.key == "gnuplot") {
                c.warn("global." + m.key, m, "rt-app's logging is replaced by schedlab's report");
            } else if (m.key == "lock_pages") {
                c.warn("global.lock_pages", m, "there is no paging in the model");
            } else if (m.key == "io_device" || m.key == "mem_buffer_size") {
                c.warn("global." + m.key, m, "mem/iorun events are modelled as copy CPU time");
            } else if (m.key == "cumulative_slack") {
                c.warn("global.cumulative_slack", m, "the report gives the worst slack of any timer");
            } else {
                c.warn("global." + m.key, m, "not an rt-app global key");
            }
        }
    }
    if (const rtj_member* r = root.find("resources"))
        c.warn("resources", *r, "the legacy resources object is not needed (rt-app creates them)");
    for (const rtj_member& m : root.members)
        if (m.key != "global" && m.key != "resources" && m.key != "tasks")
            c.warn(fmt::format("top-level key '{}'", m.key), m, "not an rt-app object");

    return default_policy;
}

/*
 * The keys a thread's scheduling parameters come from. rt-app's parse_sched_data():
 * dl-runtime, dl-period, dl-deadline (usec), else the legacy runtime, period, deadline of the
 * thread object.
 */
struct task_sched_keys {
    const rtj_member* dl[3] = {};     // dl-runtime, dl-deadline, dl-period
    const rtj_member* legacy[3] = {}; // runtime, deadline, period
    bool nice_given = false;
    int priority = 0;
};

/*
 * The thread's scheduling parameters from its keys: a SCHED_DEADLINE reservation (dl-*, else
 * the legacy runtime, deadline, period; in usec), an RT priority or a nice value.
 */
void task_sched_params(parse_ctx& c, rtapp_task& t, const rtj_value& to, const task_sched_keys& k)
{
    long long dl[3] = {0, 0, 0}; // runtime, deadline, period (usec)
    for (int i = 0; i < 3; ++i) {
        const rtj_member* m = k.dl[i] ? k.dl[i] : k.legacy[i];
        if (m && m->value && m->value->kind == rtj_value::number)
            dl[i] = m->value->integer;
        if (m && t.dl_key.empty())
            t.dl_key = m->key, t.dl_line = m->line;
    }
    if (!dl[2])
        dl[2] = dl[0]; // dl-period defaults to dl-runtime
    if (!dl[1])
        dl[1] = dl[2]; // dl-deadline to dl-period
    if (t.policy == SCHED_DEADLINE) {
        t.dl_runtime = static_cast<u64>(usecs(dl[0]));
        t.dl_deadline = static_cast<u64>(usecs(dl[1]));
        t.dl_period = static_cast<u64>(usecs(dl[2]));
        if (t.dl_key.empty()) {
            t.dl_key = "policy";
            t.dl_line = to.find("policy") ? to.find("policy")->line : t.line;
        }
        if (k.nice_given)
            c.warn(fmt::format("task '{}': 'priority'", t.name), *to.find("priority"),
                   "SCHED_DEADLINE has no priority");
    } else {
        for (const rtj_member* m : k.dl)
            if (m)
                c.warn(fmt::format("task '{}': '{}'", t.name, m->key), *m,
                       "sched_setattr() uses it for SCHED_DEADLINE only");
    }
    if (t.policy == SCHED_FIFO || t.policy == SCHED_RR) {
        // rt-app: "10 for other classes" by default; sched_setattr() takes 1..99.
        t.rt_priority = k.nice_given ? k.priority : 10;
        if (t.rt_priority < 1 || t.rt_priority > 99) {
            const rtj_member* pm = to.find("priority");
            c.fail(*pm, fmt::format("priority {} is not an RT priority (1..99) for task '{}' "
                                    "({})",
                                    t.rt_priority, t.name,
                                    t.policy == SCHED_FIFO ? "SCHED_FIFO" : "SCHED_RR"));
        }
    } else if (k.nice_given && t.policy != SCHED_DEADLINE) {
        t.nice = k.priority;
        if (t.nice < -20 || t.nice > 19) {
            const rtj_member* pm = to.find("priority");
            c.fail(*pm, fmt::format("priority {} is not a nice value (-20..19) for task '{}'",
                                    t.nice, t.name));
        }
    }
}

/* The thread's phases, or its events as one phase. */
void task_phases(parse_ctx& c, rtapp_task& t, const rtj_member& tm, const rtj_member* phases,
                 std::vector<rtapp_event>&& direct, const std::vector<std::string>& unknown)
{
    if (phases) {
        if (!direct.empty())
            c.warn(fmt::format("events beside 'phases' in task '{}'", t.name), *phases,
                   "rt-app runs the phases only");
        for (const rtj_member& pm : c.object(*phases).members) {
            rtapp_phase ph;
            ph.name = pm.key;
            auto phase_key = [&](const rtj_member& m) -> bool {
                if (m.key == "loop") {
                    ph.loop = c.integer(m, 0, 1LL << 40);
                    return true;
                }
                return sched_key(c, m, true);
            };
            std::vector<std::string> unknown_in_phase;
            ph.events = parse_events(c, c.object(pm), t.name, phase_key, &unknown_in_phase);
            if (ph.events.empty())
                c.fail_key(pm, no_event(fmt::format("phase '{}' of task '{}'", ph.name, t.name),
                                        unknown_in_phase));
            t.phases.push_back(std::move(ph));
        }
        if (t.phases.empty())
            c.fail(*phases, fmt::format("task '{}' has an empty 'phases' object", t.name));
    } else {
        if (direct.empty())
            c.fail_key(tm, no_event(fmt::format("task '{}'", t.name), unknown));
        t.phases.push_back({"", 1, std::move(direct)});
    }
}

/* One thread object of "tasks". */
rtapp_task parse_task(parse_ctx& c, const rtj_member& tm, int default_policy)
{
    const rtj_value& to = c.object(tm);
    rtapp_task t;
    t.name = tm.key;
    t.line = tm.line;
    t.policy = default_policy;
    bool loop_given = false;
    task_sched_keys k;
    const rtj_member* phases = nullptr;
    for (const char* legacy : {"exec", "lock_order", "resources"})
        if (const rtj_member* lm = to.find(legacy))
            c.fail_key(*lm, fmt::format("task '{}': '{}' is rt-app 0.x syntax, not supported "
                                        "(rewrite the task with phases and events)",
                                        t.name, legacy));
    auto task_key = [&](const rtj_member& m) -> bool {
        if (m.key == "instance") {
            t.instance = c.integer(m, 0, 100'000);
        } else if (m.key == "loop") {
            t.loop = c.integer(m, -1, 1LL << 40);
            loop_given = true;
        } else if (m.key == "delay") {
            t.delay = usecs(c.integer(m, 0, max_usec));
        } else if (m.key == "phases") {
            phases = &m;
        } else if (m.key == "policy") {
            t.policy = parse_policy(c, m, c.string(m));
        } else if (m.key == "priority") {
            k.priority = static_cast<int>(c.integer(m, -20, 99));
            k.nice_given = true;
        } else if (m.key == "cpus") {
            const rtj_value& a = *m.value;
            if (a.kind != rtj_value::array || a.items.empty())
                c.fail(m, "'cpus' expects a non-empty array of CPU numbers");
            for (const auto& it : a.items) {
                if (it->kind != rtj_value::number || !it->is_integer || it->integer < 0 ||
                    it->integer > 100'000)
                    throw config_error(c.at(it->line, it->col), "'cpus' entries are CPU numbers");
                t.cpus.push_back(static_cast<int>(it->integer));
            }
        } else if (m.key == "dl-runtime" || m.key == "dl-deadline" || m.key == "dl-period") {
            k.dl[m.key == "dl-runtime" ? 0 : m.key == "dl-deadline" ? 1 : 2] = &m;
            c.integer(m, 0, max_usec);
        } else if (m.key == "period" || m.key == "deadline") {
            k.legacy[m.key == "deadline" ? 1 : 2] = &m;
            c.integer(m, 0, max_usec);
        } else {
            return sched_key(c, m, false);
        }
        return true;
    };
    std::vector<std::string> unknown;
    std::vector<rtapp_event> direct = parse_events(c, to, t.name, task_key, &unknown);
    // The legacy "runtime" is also a runtime event, as in rt-app.
    if (const rtj_member* rm = to.find("runtime");
        rm && rm->value && rm->value->kind == rtj_value::number && rm->value->is_integer)
        k.legacy[0] = rm;
    task_sched_params(c, t, to, k);
    task_phases(c, t, tm, phases, std::move(direct), unknown);
    (void)loop_given;
    return t;
}

/* Cross references: fork targets exist; barrier users = instances x uses. */
void check_references(const parse_ctx& c, rtapp_config& cfg)
{
    for (const rtapp_task& t : cfg.tasks) {
        for (const rtapp_phase& ph : t.phases) {
            for (const rtapp_event& e : ph.events) {
                if (e.kind == rtapp_event::fork &&
                    std::none_of(cfg.tasks.begin(), cfg.tasks.end(),
                                 [&](const rtapp_task& o) { return o.name == e.ref; }))
                    throw config_error(c.at(e.line, 1),
                                       fmt::format("fork of unknown task '{}'", e.ref));
                if (e.kind == rtapp_event::barrier)
                    cfg.barrier_users[e.ref] += static_cast<u32>(t.instance);
            }
        }
    }
}

} // namespace

rtapp_config rtapp_parse(const rtj_value& root, const std::string& file, bool downgrade)
{
    rtapp_config cfg;
    cfg.file = file;
    parse_ctx c{file, cfg, downgrade, {}};
    if (root.kind != rtj_value::object)
        throw config_error(c.at(root.line, root.col), "an rt-app file is a JSON object");

    const int default_policy = parse_global(c, root, cfg);
    const rtj_member* tasks = root.find("tasks");
    if (!tasks)
        throw config_error(c.at(root.line, root.col), "no \"tasks\" object (it is mandatory)");
    for (const rtj_member& tm : c.object(*tasks).members)
        cfg.tasks.push_back(parse_task(c, tm, default_policy));
    if (cfg.tasks.empty())
        c.fail(*tasks, "the \"tasks\" object is empty");
    check_references(c, cfg);
    return cfg;
}

rtapp_params parse_rtapp_options(const std::vector<std::string>& args)
{
    rtapp_params rp;
    std::string duration;
    std::vector<std::string> pos;
    const std::vector<option_spec> specs = {
        {.long_name = "duration", .text = &duration,
         .help = "schedlab only: seconds, overrides global.duration"},
        {.long_name = "downgrade-unmodelled", .flag = &rp.downgrade,
         .help = "schedlab only: run keys the model cannot honour (SCHED_DEADLINE, dl-*, "
                 "util_min/max, taskgroup, phase-level cpus/policy/priority) as if absent, with "
                 "a warning each, instead of refusing the file"},
    };
    parse_options(args, specs, "rt-app", &pos);
    if (pos.size() != 1)
        throw config_error("rt-app", "expects one argument: the JSON file (rt-app FILE.json)");
    rp.file = pos[0];
    if (rp.file == "-")
        throw config_error("rt-app", "reading the use case from stdin is not supported");
    if (!duration.empty())
        rp.duration = parse_seconds(duration, "--duration", "rt-app");
    return rp;
}

/* ------------------------------------------------------------------------ */
/* the threads                                                                */

/*
 * One rt-app thread: runs its task's phases and events. Blocking objects
 * follow pthread semantics: a mutex is free or owned, unlock wakes one
 * waiter that then competes for it (no hand-off); condition variables and
 * suspend/resume have no memory; semaphores count; a barrier releases all
 * its users when the last arrives. Uncontended operations make no syscall.
 * The log is looked up by index each time: a fork may grow the vector.
 */
task_code rtapp_workload::run_thread(task_context& t, const rtapp_task& task, std::size_t log)
{
    logs_[log].p = &t.task();
    cursor cur;
    cur.act_start = t.now();
    ctl_[log].thread_start = t.now();
    if (task.loop == 0)
        co_return;
    while (cur.phase < task.phases.size() && task.phases[cur.phase].loop == 0)
        ++cur.phase;
    if (cur.phase == task.phases.size())
        co_return;
    if (task.delay > 0) {
        co_await t.timeout(task.delay);
        cur.act_start = t.now();
    }
    for (;;) {
        const rtapp_event& e = task.phases[cur.phase].events[cur.ev];
        if (e.kind == rtapp_event::runtime) {
            // Burns CPU until its wall time has passed, checked every 100 us of work
            // (and, as modelled, neither counted in the events nor flushing owed CPU).
            const sim_time end = t.now() + e.ns;
            logs_[log].run += e.ns;
            while (t.now() < end)
                co_await t.run(std::min<sim_dur>(usecs(100), end - t.now()));
            if (!advance(cur, task, log, t.now()))
                co_return;
            continue;
        }
        co_await run_event(t, e, log);
        ++logs_[log].events;
        if (!advance(cur, task, log, t.now()))
            co_return;
        if (t.owed() > 0)
            co_await t.run(0);
    }
}

/// Moves past the current event; false when the thread has run all its loops.
bool rtapp_workload::advance(cursor& cur, const rtapp_task& task, std::size_t log, sim_time now)
{
    ++cur.ev;
    const rtapp_phase& ph = task.phases[cur.phase];
    if (cur.ev < ph.events.size())
        return true;
    cur.ev = 0;
    thread_log& l = logs_[log]; // the end of an activation
    ++l.activations;
    l.period_sum += now - cur.act_start;
    cur.act_start = now;
    if (++cur.phase_iter < ph.loop)
        return true;
    cur.phase_iter = 0;
    ++cur.phase;
    while (cur.phase < task.phases.size() && task.phases[cur.phase].loop == 0)
        ++cur.phase;
    if (cur.phase < task.phases.size())
        return true;
    cur.phase = 0;
    ++cur.task_iter;
    return task.loop < 0 || cur.task_iter < task.loop;
}

call_awaiter<calls::sleep_on> rtapp_workload::block_on(task_context& t, wait_queue& wq,
                                                       std::size_t log)
{
    ctl_[log].blocked_on = &wq; // for the shutdown, which dequeues it
    return t.sleep_on(wq);
}

/*
 * model: rt-app's run_event() per event (rt-app 1.0): run burns CPU; sleep
 * is a nanosleep; timer sleeps to the next period of its shared reference
 * (relative mode re-bases a late timer on now, absolute keeps the grid);
 * lock/unlock/wait/signal/broad/sync are pthread mutex and condition
 * operations; suspend waits on a condition, resume broadcasts it; barrier
 * waits for all its users; fork starts a thread of another task; mem/iorun
 * cost their bytes' copy time. (runtime: run_thread().)
 */
task_code rtapp_workload::run_event(task_context& t, const rtapp_event& e, std::size_t log)
{
    const cost_params& c = t.costs();
    task_struct& p = t.task();
    switch (e.kind) {
    case rtapp_event::run:
        logs_[log].run += e.ns;
        co_await t.run(e.ns);
        break;
    case rtapp_event::runtime:
        break; // run_thread()
    case rtapp_event::mem:
    case rtapp_event::iorun:
        co_await t.run(copy_cost(c, std::stoull(e.ref)));
        break;
    case rtapp_event::sleep:
        co_await t.syscall(c.nanosleep);
        if (e.ns > 0)
            co_await t.timeout(e.ns);
        break;
    case rtapp_event::timer:
        co_await timer_event(t, e, log);
        break;
    case rtapp_event::lock: {
        sync_obj& m = mutex(e.ref);
        if (m.owner != nullptr) { // contended: futex_wait, then compete when woken
            co_await t.syscall(c.futex_wait);
            while (m.owner != nullptr) {
                co_await block_on(t, m.waiters, log);
                ctl_[log].blocked_on = nullptr;
            }
        }
        m.owner = &p;
        break;
    }
    case rtapp_event::unlock: {
        sync_obj& m = mutex(e.ref);
        if (m.owner == &p)
            m.owner = nullptr;
        if (!m.waiters.has_sleeper())
            break;
        co_await t.syscall(c.futex_wake);
        const int nr = m.waiters.wake_up(t.sys(), 1, 0);
        t.owe(t.wake_cost(nr));
        break;
    }
    case rtapp_event::signal:
    case rtapp_event::broad:
    case rtapp_event::resume: {
        sync_obj& cv = cond(e.ref);
        if (!cv.waiters.has_sleeper())
            break; // no memory: a signal without a waiter is lost
        co_await t.syscall(c.futex_wake);
        // a broadcast's wakees: futex_wake()'s wake_up_q(), walked in time (struct wake_walk)
        const int nr = cv.waiters.wake_up(t.sys(), e.kind == rtapp_event::signal ? 1 : 0, 0,
                                          &t.walk(), true);
        t.owe(t.wake_cost(nr));
        break;
    }
    case rtapp_event::wait:
    case rtapp_event::sync:
    case rtapp_event::suspend:
        co_await cond_wait(t, e, log);
        break;
    case rtapp_event::barrier: {
        sync_obj& b = barrier(e.ref);
        if (++b.count >= b.parties) {
            b.count = 0;
            ++b.generation;
            if (b.waiters.has_sleeper())
                t.owe(t.charge(c.futex_wake) +
                      t.wake_cost(b.waiters.wake_up_all(t.sys(), 0, &t.walk(), true)));
            break;
        }
        const u64 gen = b.generation;
        co_await t.syscall(c.futex_wait);
        while (b.generation == gen) {
            co_await block_on(t, b.waiters, log);
            ctl_[log].blocked_on = nullptr;
        }
        break;
    }
    case rtapp_event::sem_post: {
        sync_obj& sm = sem(e.ref);
        ++sm.count;
        if (sm.waiters.has_sleeper())
            t.owe(t.charge(c.futex_wake) + t.wake_cost(sm.waiters.wake_up(t.sys(), 1, 0)));
        break;
    }
    case rtapp_event::sem_wait: {
        sync_obj& sm = sem(e.ref);
        if (sm.count == 0) {
            co_await t.syscall(c.futex_wait);
            while (sm.count == 0) {
                co_await block_on(t, sm.waiters, log);
                ctl_[log].blocked_on = nullptr;
            }
        }
        --sm.count;
        break;
    }
    case rtapp_event::fork:
        co_await t.syscall(c.fork_thread);
        for (const rtapp_task& other : cfg_.tasks)
            if (other.name == e.ref)
                start_thread(t.sys(), &p, other, -1);
        break;
    case rtapp_event::yield:
        co_await t.yield();
        break;
    }
}

// timer: sleep to the next period of the (shared) timer; record the slack and wakeup latency.
task_code rtapp_workload::timer_event(task_context& t, const rtapp_event& e, std::size_t log)
{
    timer_obj& tm = timer(resolve_timer(e.ref, log));
    if (!tm.init) { // the first use starts the timer at the thread's start
        tm.init = true;
        tm.next = ctl_[log].thread_start;
    }
    tm.next += e.ns;
    const sim_time next = tm.next;
    const sim_dur slack = next - t.now(); // negative when late
    thread_log& l = logs_[log];
    l.slack_min = l.has_slack ? std::min(l.slack_min, slack) : slack;
    l.has_slack = true;
    if (next <= t.now()) {
        // Late: relative mode re-bases the timer on now; absolute keeps the grid.
        if (!e.absolute)
            tm.next = t.now();
        co_return;
    }
    co_await t.syscall(t.costs().nanosleep);
    if (next > t.now())
        co_await t.timeout(next - t.now());
    const sim_dur lat = std::max<sim_dur>(0, t.now() - next); // the timer's wakeup latency
    thread_log& lw = logs_[log];
    lw.wu_lat_max = std::max(lw.wu_lat_max, lat);
    lw.wu_lat_sum += lat;
    ++lw.timer_wakeups;
}

/*
 * pthread_cond_wait(): (sync: signal first,) release the mutex and sleep on
 * the condition atomically, re-acquire the mutex when woken; suspend sleeps
 * on the condition alone.
 */
task_code rtapp_workload::cond_wait(task_context& t, const rtapp_event& e, std::size_t log)
{
    const cost_params& c = t.costs();
    task_struct& p = t.task();
    sync_obj& cv = cond(e.ref);
    const bool with_mutex = e.kind != rtapp_event::suspend;
    if (e.kind == rtapp_event::sync && cv.waiters.has_sleeper())
        t.owe(t.charge(c.futex_wake) + t.wake_cost(cv.waiters.wake_up(t.sys(), 1, 0)));
    if (with_mutex) {
        sync_obj& m = mutex(e.mutex);
        if (m.owner == &p) {
            m.owner = nullptr;
            if (m.waiters.has_sleeper())
                t.owe(t.charge(c.futex_wake) + t.wake_cost(m.waiters.wake_up(t.sys(), 1, 0)));
        }
    }
    t.owe(t.charge(c.futex_wait));
    co_await block_on(t, cv.waiters, log);
    ctl_[log].blocked_on = nullptr;
    if (!with_mutex)
        co_return;
    // woken: re-take the mutex (blocking on it while it is owned).
    sync_obj& m = mutex(e.mutex);
    while (m.owner != nullptr) {
        t.owe(t.charge(c.futex_wait));
        co_await block_on(t, m.waiters, log);
        ctl_[log].blocked_on = nullptr;
    }
    m.owner = &p;
}

/* ------------------------------------------------------------------------ */
/* the workload                                                               */

std::string rtapp_workload::command_line() const
{
    const sim_dur d = duration();
    return fmt::format("rt-app {}{}{}", rp_.file,
                       rp_.duration != -2 ? fmt::format(" --duration {}", static_cast<double>(d) / 1e9)
                                          : std::string(),
                       rp_.downgrade ? " --downgrade-unmodelled" : "");
}

std::string rtapp_workload::resolve_timer(const std::string& ref, std::size_t log) const
{
    // "unique..." timers are per thread instance (parse_event prefixed them with the task).
    if (ref.find('/') != std::string::npos)
        return fmt::format("{}#{}", ref, log);
    return ref;
}

void rtapp_workload::start_thread(syscalls& sys, task_struct* parent, const rtapp_task& t,
                                  int index)
{
    const std::size_t log = logs_.size();
    thread_log l;
    l.task = &t;
    if (index < 0) // forked: rt-app names them after the task with a fork index
        l.name = fmt::format("{}-{}", t.name, fork_counts_[t.name]++);
    else
        l.name = t.instance > 1 ? fmt::format("{}-{}", t.name, index) : t.name;
    logs_.push_back(l);
    ctl_.emplace_back();
    task_opts o;
    o.comm = l.name.substr(0, 15); // TASK_COMM_LEN
    o.nice = t.policy == SCHED_IDLE ? 0 : t.nice;
    o.policy = t.policy;
    o.rt_priority = t.rt_priority;
    o.dl = {t.dl_runtime, t.dl_deadline, t.dl_period};
    o.thread = parent != nullptr;
    if (!t.cpus.empty()) {
        o.allowed = cpumask(sys.nr_cpu_ids());
        for (int cpu : t.cpus)
            o.allowed.set(cpu);
    }
    auto b = make_task(
        [this, &t, log](task_context& c) {
            ctl_[log].ctx = &c;
            c.at_exit([this, log] {
                logs_[log].exited = true;
                auto it = std::find(live_.begin(), live_.end(), log);
                if (it != live_.end())
                    live_.erase(it);
            });
            return run_thread(c, t, log);
        },
        joined_);
    try {
        ctl_[log].task = parent ? &sys.fork(*parent, std::move(b), o) : &sys.spawn(std::move(b), o);
    } catch (const config_error& e) {
        // rt-app's thread calls sched_setattr() on itself; a refusal ends the use case.
        throw config_error(fmt::format("{}:{}", cfg_.file, t.dl_line ? t.dl_line : t.line),
                           fmt::format("task '{}', thread '{}': '{}': {}", t.name, l.name,
                                       t.dl_key.empty() ? "policy" : t.dl_key, e.what()));
    }
    live_.push_back(log);
    ++nr_started_;
}

/*
 * model: rt-app's shutdown at the end of the duration: every thread stops;
 * blocked ones are woken (removed from what they wait on) and exit.
 */
void rtapp_workload::stop_all(syscalls& sys)
{
    for (const std::size_t i : std::vector<std::size_t>(live_)) {
        thread_ctl& ctl = ctl_[i];
        if (ctl.blocked_on) {
            ctl.blocked_on->remove(*ctl.task);
            ctl.blocked_on = nullptr;
        }
        ctl.ctx->kill();                             // it exits at its next step, wherever it is
        sys.try_to_wake_up(*ctl.task, TASK_NORMAL, 0); // also cancels a pending sleep's timer
    }
}

/*
 * model: rt-app main(): creates every task's instances (pthreads; here
 * spawned on CPU 0 with the task's policy, nice and affinity), then sleeps
 * for the duration and shuts the threads down, or (duration -1) joins them.
 */
void rtapp_workload::setup(syscalls& sys)
{
    for (const rtapp_task& t : cfg_.tasks)
        for (int cpu : t.cpus)
            if (cpu >= sys.nr_cpu_ids())
                throw config_error(fmt::format("{}:{}", cfg_.file, t.line),
                                   fmt::format("task '{}': cpus lists CPU {}, but the machine has "
                                               "{} CPUs",
                                               t.name, cpu, sys.nr_cpu_ids()));
    for (const auto& [name, users] : cfg_.barrier_users)
        barriers_[name].parties = users;
    joined_ = &state_.make_counter("rt-app/join", 0);
    start_ = sys.now();
    task_opts o;
    o.comm = "rt-app";
    o.cpu = 0;
    sys.spawn(make_task([this](task_context& t) { return run_main(t); }), o);
}

task_code rtapp_workload::run_main(task_context& t)
{
    for (const rtapp_task& task : cfg_.tasks)
        for (long long i = 0; i < task.instance; ++i)
            start_thread(t.sys(), &t.task(), task, static_cast<int>(i));
    co_await t.run(t.charge(t.costs().fork_thread * static_cast<sim_dur>(nr_started_)));
    const sim_dur d = duration();
    if (d > 0) {
        co_await t.sleep_until(start_ + d);
        stop_all(t.sys());
    }
    // Join every thread, including those forked meanwhile.
    const std::function<u64()> started = [this] { return nr_started_; };
    while (joined_->value < nr_started_)
        co_await t.wait_for(*joined_, started, &cost_params::wait_child);
    end_ = t.now();
    finished_ = true;
}

std::string rtapp_workload::report() const
{
    std::string out;
    for (const std::string& w : cfg_.warnings)
        out += w + "\n";
    const sim_dur d = duration();
    out += fmt::format("[rt-app] <notice> use case {}: {} thread{}, duration {}\n", cfg_.file,
                       logs_.size(), logs_.size() == 1 ? "" : "s",
                       d > 0 ? fmt::format("{} s", static_cast<double>(d) / 1e9)
                             : std::string("until the threads end"));
    out += fmt::format("# {:<16} {:>11} {:>12} {:>14} {:>14} {:>14} {:>14}\n", "thread", "activations",
                       "run(us)", "period avg(us)", "slack min(us)", "wu_lat avg(us)",
                       "wu_lat max(us)");
    for (const thread_log& l : logs_) {
        const double period =
            l.activations ? static_cast<double>(l.period_sum) / 1e3 / static_cast<double>(l.activations) : 0;
        out += fmt::format("  {:<16} {:>11} {:>12} {:>14.1f} {:>14} {:>14} {:>14}\n", l.name,
                           l.activations, l.run / 1000, period,
                           l.has_slack ? fmt::format("{}", l.slack_min / 1000) : std::string("-"),
                           l.timer_wakeups ? fmt::format("{:.1f}", static_cast<double>(l.wu_lat_sum) /
                                                                       1e3 / static_cast<double>(l.timer_wakeups))
                                           : std::string("-"),
                           l.timer_wakeups ? fmt::format("{:.1f}", static_cast<double>(l.wu_lat_max) / 1e3)
                                           : std::string("-"));
    }
    if (!finished_)
        out += "# schedlab: not finished when the run stopped (the use case runs until its threads "
               "end; use --duration)\n";
    return out;
}

std::vector<workload_metric> rtapp_workload::metrics() const
{
    if (!finished_)
        return {};
    u64 acts = 0;
    sim_dur lat_max = 0;
    sim_dur lat_sum = 0;
    u64 wakeups = 0;
    for (const thread_log& l : logs_) {
        acts += l.activations;
        lat_max = std::max(lat_max, l.wu_lat_max);
        lat_sum += l.wu_lat_sum;
        wakeups += l.timer_wakeups;
    }
    std::vector<workload_metric> m = {{"activations", "count", static_cast<double>(acts), true}};
    if (wakeups) {
        m.push_back({"wu_lat_avg", "us", static_cast<double>(lat_sum) / 1e3 / static_cast<double>(wakeups), false});
        m.push_back({"wu_lat_max", "us", static_cast<double>(lat_max) / 1e3, false});
    }
    return m;
}

std::unique_ptr<workload> make_rtapp_workload(const std::vector<std::string>& args)
{
    rtapp_params rp = parse_rtapp_options(args);
    auto root = rtj_parse_file(rp.file);
    rtapp_config cfg = rtapp_parse(*root, rp.file, rp.downgrade);
    // Every instance of every task is a thread; a fork makes more at run time. 1.9 KB per
    // thread measured for a one-event task, 4 KB used (docs/testing.md).
    double threads = 0;
    for (const rtapp_task& t : cfg.tasks)
        threads += static_cast<double>(t.instance);
    check_task_count(threads, 4e3, fmt::format("{} tasks' instances", cfg.tasks.size()), rp.file);
    return std::make_unique<rtapp_workload>(std::move(rp), std::move(cfg));
}

} // namespace schedlab
