// SPDX-License-Identifier: GPL-2.0-only
/*
 * rt-app: the JSON dialect, the file model, the event semantics, and every
 * example file of Debian's rt-app package.
 */
#include "workload/rt_app.h"

#include "sim/config_error.h"
#include "sim/test_support.h"
#include "support/workload_env.h"
#include "workload/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace schedlab {
namespace {

using test_support::error_of;
using ::testing::HasSubstr;
using testing::test_env;

std::string json_error(const std::string& text)
{
    try {
        rtj_parse(text, "t.json");
    } catch (const config_error& e) {
        return e.what();
    }
    return "(accepted)";
}

TEST(rtapp_json, accepts_comments_trailing_commas_duplicates_and_bare_keys)
{
    const auto v = rtj_parse("/* head */ {\n"
                             "  // line comment\n"
                             "  \"a\" : 1, \"a\" : 2.5, \"b\": [1, 2, ],\n"
                             "  \"s\": \"x\\\"y\", \"t\": true, \"suspend\",\n"
                             "}\n",
                             "t.json");
    ASSERT_EQ(v->kind, rtj_value::object);
    ASSERT_EQ(v->members.size(), 6u);
    EXPECT_EQ(v->members[0].key, "a");
    EXPECT_EQ(v->members[0].value->integer, 1);
    EXPECT_EQ(v->members[1].key, "a") << "duplicates are kept, in file order";
    EXPECT_DOUBLE_EQ(v->members[1].value->num, 2.5);
    EXPECT_FALSE(v->members[1].value->is_integer);
    EXPECT_EQ(v->members[2].value->items.size(), 2u);
    EXPECT_EQ(v->members[3].value->str, "x\"y");
    EXPECT_TRUE(v->members[4].value->b);
    EXPECT_TRUE(v->members[5].bare);
    EXPECT_EQ(v->members[5].line, 4);
}

TEST(rtapp_json, errors_name_file_line_and_column)
{
    EXPECT_THAT(json_error("{\n  \"a\" 1\n}"), HasSubstr("t.json:2:7: expected ':'"));
    EXPECT_THAT(json_error("{\n  \"a\": \"open\n}"), HasSubstr("t.json:2:"));
    EXPECT_THAT(json_error("{\n  \"a\": yes\n}"), HasSubstr("t.json:2:8: unexpected word 'yes'"));
    EXPECT_THAT(json_error("{ \"a\": 1 } x"), HasSubstr("t.json:1:12: unexpected text"));
    EXPECT_THAT(json_error("{ \"a\": [1 2] }"), HasSubstr("t.json:1:11: expected ',' or ']'"));
    EXPECT_THAT(json_error("/* never closed"), HasSubstr("t.json:1:1: unterminated"));
    EXPECT_THAT(json_error("{ a: 1 }"), HasSubstr("t.json:1:3: expected a \"key\""));
    EXPECT_THAT(json_error("{ \"a\": -x }"), HasSubstr("t.json:1:8: malformed number"));
}

rtapp_config parse(const std::string& text, bool downgrade = false)
{
    return rtapp_parse(*rtj_parse(text, "t.json"), "t.json", downgrade);
}

std::string parse_error(const std::string& text, bool downgrade = false)
{
    try {
        parse(text, downgrade);
    } catch (const config_error& e) {
        return e.what();
    }
    return "(accepted)";
}

TEST(rtapp_parse, events_are_matched_by_prefix_in_rt_apps_order)
{
    const rtapp_config c = parse(R"({ "tasks": { "t": { "loop": 2,
        "run0": 10, "runtime1": 20, "sleep": 30, "memrun": { "size": 64, "count": 2 }, "mem": 8,
        "timer": { "ref": "unique", "period": 100, "mode": "absolute" },
        "suspend", "resume": "t", "yield": "", "barrier": "b", "fork": "t",
        "lock": "m", "wait": { "ref": "c", "mutex": "m" }, "unlock": "m" } } })");
    ASSERT_EQ(c.tasks.size(), 1u);
    const auto& ev = c.tasks[0].phases.at(0).events;
    ASSERT_EQ(ev.size(), 14u);
    EXPECT_EQ(ev[0].kind, rtapp_event::run);
    EXPECT_EQ(ev[0].ns, usecs(10));
    EXPECT_EQ(ev[1].kind, rtapp_event::runtime) << "runtime before run";
    EXPECT_EQ(ev[2].kind, rtapp_event::sleep);
    EXPECT_EQ(ev[3].kind, rtapp_event::mem) << "memrun before mem";
    EXPECT_EQ(ev[3].ref, "128");
    EXPECT_EQ(ev[5].kind, rtapp_event::timer);
    EXPECT_TRUE(ev[5].absolute);
    EXPECT_EQ(ev[6].kind, rtapp_event::suspend);
    EXPECT_EQ(ev[6].ref, "t") << "a bare suspend waits on the task's own name";
    EXPECT_EQ(ev[12].kind, rtapp_event::wait);
    EXPECT_EQ(ev[12].mutex, "m");
    EXPECT_EQ(c.tasks[0].loop, 2);
    EXPECT_EQ(c.barrier_users.at("b"), 1u);
}

TEST(rtapp_parse, unsupported_keys_warn_once_and_bad_files_are_refused_with_their_line)
{
    const std::string text = R"({
        "global": { "logdir": "./", "ftrace": true, "default_policy": "SCHED_FIFO" },
        "tasks": {
            "a": { "util_min":   100, "run": 1, "phases_x": 1 },
            "b": { "dl-runtime": 100, "util_min": 10, "run": 1 } } })";
    // Without the flag, what the model cannot honour refuses the file, naming the key.
    EXPECT_THAT(parse_error(text), HasSubstr("t.json:4:20: 'util_min' is not modelled (no "
                                             "uclamp"));
    EXPECT_THAT(parse_error(text), HasSubstr("--downgrade-unmodelled"));
    const rtapp_config c = parse(text, true);
    EXPECT_EQ(c.tasks[0].policy, SCHED_FIFO) << "SCHED_FIFO runs as written";
    EXPECT_EQ(c.tasks[0].rt_priority, 10) << "rt-app's default RT priority";
    auto count = [&](const std::string& what) {
        return std::count_if(c.warnings.begin(), c.warnings.end(),
                             [&](const std::string& w) { return w.find(what) != std::string::npos; });
    };
    EXPECT_EQ(count("global.logdir ignored"), 1);
    EXPECT_EQ(count("SCHED_FIFO"), 0);
    EXPECT_EQ(count("'util_min' downgraded (--downgrade-unmodelled)"), 1)
        << "one warning per key, not per use";
    EXPECT_EQ(count("task 'b': 'dl-runtime' ignored: sched_setattr() uses it for "
                    "SCHED_DEADLINE only"),
              1);
    EXPECT_EQ(count("t.json:4:49: warning: key 'phases_x' ignored"), 1);

    EXPECT_THAT(parse_error(R"({ "global": {} })"), HasSubstr("no \"tasks\" object"));
    EXPECT_THAT(parse_error("{ \"tasks\": {\n \"a\": { \"run\": -5 } } }"),
                HasSubstr("t.json:2:16: 'run': -5 is out of range"));
    EXPECT_THAT(parse_error("{ \"tasks\": {\n \"a\": { \"run\": \"x\" } } }"),
                HasSubstr("t.json:2:16: 'run' expects an integer"));
    EXPECT_THAT(parse_error("{ \"tasks\": {\n \"a\": { \"loop\": 1 } } }"),
                HasSubstr("t.json:2:2: task 'a' has no event"));
    EXPECT_THAT(parse_error("{ \"tasks\": { \"a\": {\n \"fork\": \"zz\" } } }"),
                HasSubstr("t.json:2:1: fork of unknown task 'zz'"));
    EXPECT_THAT(parse_error("{ \"tasks\": { \"a\": {\n  \"exec\": 5, \"period\": 10 } } }"),
                HasSubstr("t.json:2:3: task 'a': 'exec' is rt-app 0.x syntax"));
    EXPECT_THAT(parse_error("{ \"tasks\": { \"a\": { \"run\": 1,\n \"priority\": 30 } } }"),
                HasSubstr("t.json:2:14: priority 30 is not a nice value"));
    EXPECT_THAT(parse_error("{ \"tasks\": { \"a\": { \"timer\":\n { \"period\": 5 } } } }"),
                HasSubstr("t.json:2:2: timer 'timer' needs \"ref\""));
    EXPECT_THAT(parse_error("{ \"global\": { \"default_policy\": \"SCHED_X\" }, \"tasks\": {} }"),
                HasSubstr("unknown policy 'SCHED_X'"));
}

TEST(rtapp_parse, rt_policies_run_as_written_and_what_is_not_modelled_needs_the_flag)
{
    const rtapp_config c = parse(R"({ "tasks": {
        "f": { "policy": "SCHED_FIFO", "priority": 50, "run": 1 },
        "r": { "policy": "SCHED_RR", "run": 1 },
        "o": { "priority": -5, "run": 1 } } })");
    EXPECT_EQ(c.tasks[0].policy, SCHED_FIFO);
    EXPECT_EQ(c.tasks[0].rt_priority, 50);
    EXPECT_EQ(c.tasks[1].policy, SCHED_RR);
    EXPECT_EQ(c.tasks[1].rt_priority, 10);
    EXPECT_EQ(c.tasks[2].nice, -5);
    EXPECT_EQ(c.tasks[2].rt_priority, 0);
    EXPECT_TRUE(c.warnings.empty());

    EXPECT_THAT(parse_error("{ \"tasks\": { \"a\": { \"run\": 1, \"policy\": \"SCHED_RR\",\n "
                            "\"priority\": 0 } } }"),
                HasSubstr("t.json:2:14: priority 0 is not an RT priority (1..99) for task 'a' "
                          "(SCHED_RR)"));
    // SCHED_DEADLINE (rt-app's parse_sched_data()): usec; dl-period defaults to dl-runtime,
    // dl-deadline to dl-period; the legacy runtime/period/deadline when dl-* are absent.
    const rtapp_config d = parse(R"({ "tasks": {
        "a": { "policy": "SCHED_DEADLINE", "dl-runtime": 10000, "dl-period": 100000, "run": 1 },
        "b": { "policy": "SCHED_DEADLINE", "dl-runtime": 5000, "run": 1 },
        "c": { "policy": "SCHED_DEADLINE", "runtime": 2000, "period": 30000, "deadline": 20000 } } })");
    EXPECT_EQ(d.tasks[0].policy, SCHED_DEADLINE);
    EXPECT_EQ(d.tasks[0].dl_runtime, static_cast<u64>(msecs(10)));
    EXPECT_EQ(d.tasks[0].dl_period, static_cast<u64>(msecs(100)));
    EXPECT_EQ(d.tasks[0].dl_deadline, static_cast<u64>(msecs(100)));
    EXPECT_EQ(d.tasks[1].dl_period, static_cast<u64>(msecs(5)));
    EXPECT_EQ(d.tasks[1].dl_deadline, static_cast<u64>(msecs(5)));
    EXPECT_EQ(d.tasks[2].dl_runtime, static_cast<u64>(msecs(2)));
    EXPECT_EQ(d.tasks[2].dl_period, static_cast<u64>(msecs(30)));
    EXPECT_EQ(d.tasks[2].dl_deadline, static_cast<u64>(msecs(20)));
    EXPECT_TRUE(d.warnings.empty());
    EXPECT_THAT(parse_error(R"({ "tasks": { "a": { "phases": {
        "p": { "run": 1, "dl-runtime": 5 } } } } })"),
                HasSubstr("phase-level 'dl-runtime' is not modelled"));
    const std::string phase = R"({ "tasks": { "a": { "phases": {
        "p": { "run": 1, "priority": 5 } } } } })";
    EXPECT_THAT(parse_error(phase), HasSubstr("phase-level 'priority' is not modelled"));
    EXPECT_THAT(parse(phase, true).warnings.at(0), HasSubstr("the task-level value is kept"));
    for (const char* key : {"taskgroup\": \"/g", "util_max\": \"5"})
        EXPECT_THAT(parse_error(fmt::format("{{ \"tasks\": {{ \"a\": {{ \"run\": 1, \"{}\" }} }} }}",
                                            key)),
                    HasSubstr("is not modelled"))
            << key;
}

TEST(rtapp_options, the_downgrade_flag_is_parsed_and_shown_in_the_command_line)
{
    EXPECT_FALSE(parse_rtapp_options({"a.json"}).downgrade);
    EXPECT_TRUE(parse_rtapp_options({"a.json", "--downgrade-unmodelled"}).downgrade);
}

struct ra_run {
    std::unique_ptr<rtapp_workload> w;
    std::unique_ptr<test_env> t;
};

ra_run run_rtapp(const std::string& text, int cores, sim_dur duration = -2)
{
    ra_run r;
    r.t = std::make_unique<test_env>(cores);
    rtapp_params rp;
    rp.file = "t.json";
    rp.duration = duration;
    r.w = std::make_unique<rtapp_workload>(rp, parse(text));
    r.w->setup(r.t->k.sys());
    r.t->k.run(secs(30));
    return r;
}

const rtapp_workload::thread_log& thread(const ra_run& r, const std::string& name)
{
    for (const auto& l : r.w->threads())
        if (l.name == name)
            return l;
    throw std::runtime_error("no thread " + name);
}

TEST(rtapp_run, run_and_sleep_loops_give_their_period_and_instances_are_threads)
{
    const ra_run r = run_rtapp(R"({ "tasks": { "t": { "instance": 2, "loop": 5,
        "run": 2000, "sleep": 8000 } } })", 2);
    ASSERT_TRUE(r.w->finished());
    EXPECT_TRUE(r.t->k.all_exited());
    ASSERT_EQ(r.w->threads().size(), 2u);
    for (const auto& l : r.w->threads()) {
        EXPECT_EQ(l.activations, 5u);
        EXPECT_EQ(l.run, msecs(10));
        // each sleep lasts its 50 us of timer slack more (hrtimer_nanosleep())
        EXPECT_NEAR(static_cast<double>(l.period_sum) / 5, 10e6 + 50e3, 20e3);
    }
    EXPECT_EQ(r.w->threads()[0].name, "t-0");
    EXPECT_EQ(r.w->threads()[1].p->comm, "t-1");
}

TEST(rtapp_run, a_timer_keeps_its_period_even_when_the_work_varies)
{
    const ra_run r = run_rtapp(R"({ "tasks": { "t": { "loop": 1, "phases": {
        "light": { "loop": 5, "run": 1000, "timer": { "ref": "unique", "period": 10000 } },
        "heavy": { "loop": 5, "run": 7000, "timer": { "ref": "unique", "period": 10000 } } } } } })",
                               1);
    ASSERT_TRUE(r.w->finished());
    const auto& l = thread(r, "t");
    EXPECT_EQ(l.activations, 10u);
    EXPECT_NEAR(static_cast<double>(l.period_sum) / 10, 10e6, 10e3);
    EXPECT_NEAR(static_cast<double>(l.slack_min), 3e6 - 50e3, 10e3)
        << "10 ms - 7 ms of run, begun at the end of the timer's 50 us slack";
    EXPECT_EQ(l.timer_wakeups, 10u);
}

TEST(rtapp_run, a_fifo_thread_preempts_a_fair_hog_and_downgraded_it_waits)
{
    // One CPU: a SCHED_FIFO thread wakes every 10 ms for 1 ms while a SCHED_OTHER thread
    // spins. As FIFO it preempts the hog at each timer wakeup (latency: the wakeup path
    // only); as SCHED_OTHER (what the parser used to run) it shares the CPU fairly.
    const std::string fifo = R"({ "global": { "duration": 1 }, "tasks": {
        "rt": { "policy": "SCHED_FIFO", "priority": 50, "cpus": [0],
                "run": 1000, "timer": { "ref": "unique", "period": 10000 } },
        "hog": { "cpus": [0], "run": 100000 } } })";
    std::string other = fifo;
    other.replace(other.find("SCHED_FIFO"), 10, "SCHED_OTHER");
    other.replace(other.find("\"priority\": 50"), 14, "\"priority\": 0");
    const ra_run r = run_rtapp(fifo, 1);
    const ra_run o = run_rtapp(other, 1);
    ASSERT_TRUE(r.w->finished());
    ASSERT_TRUE(o.w->finished());
    EXPECT_EQ(thread(r, "rt").p->sched_class, &rt_sched_class);
    EXPECT_EQ(thread(o, "rt").p->sched_class, &fair_sched_class);
    EXPECT_LT(thread(r, "rt").wu_lat_max, usecs(100));
    EXPECT_GT(thread(o, "rt").wu_lat_max, 10 * thread(r, "rt").wu_lat_max);
    EXPECT_GE(thread(r, "rt").activations, 99u);
}

TEST(rtapp_run, a_deadline_thread_runs_in_the_dl_class_and_is_served_at_each_timer)
{
    // One CPU: a SCHED_DEADLINE thread (2 ms every 10 ms) wakes every 10 ms for 1 ms while
    // a SCHED_OTHER thread spins: the DL wakee preempts at once, within its reservation.
    const ra_run r = run_rtapp(R"({ "global": { "duration": 1 }, "tasks": {
        "dl": { "policy": "SCHED_DEADLINE", "dl-runtime": 2000, "dl-period": 10000,
                "run": 1000, "timer": { "ref": "unique", "period": 10000 } },
        "hog": { "run": 100000 } } })", 1);
    ASSERT_TRUE(r.w->finished());
    const auto& dl = thread(r, "dl");
    EXPECT_EQ(dl.p->sched_class, &dl_sched_class);
    EXPECT_EQ(dl.p->dl.dl_runtime, static_cast<u64>(msecs(2)));
    EXPECT_LT(dl.wu_lat_max, usecs(100));
    EXPECT_GE(dl.activations, 99u);
    EXPECT_EQ(dl.p->dl.nr_throttled, 0u) << "1 ms of its 2 ms each period";
}

TEST(rtapp_run, a_reservation_the_kernel_refuses_is_an_error_naming_file_thread_and_key)
{
    // Two CPUs admit 2 x 95%: three 50% threads fit, the fourth is -EBUSY, and rt-app's
    // use case ends with sched_setattr()'s error.
    const std::string err = test_support::error_of([] {
        run_rtapp(R"({ "tasks": {
        "d": { "instance": 4, "policy": "SCHED_DEADLINE",
               "dl-runtime": 50000, "dl-period": 100000, "run": 1000 } } })", 2);
    });
    EXPECT_THAT(err, HasSubstr("t.json:3:"));
    EXPECT_THAT(err, HasSubstr("task 'd', thread 'd-3': 'dl-runtime'"));
    EXPECT_THAT(err, HasSubstr("-EBUSY"));
}

TEST(rtapp_run, a_mutex_serialises_its_critical_sections)
{
    // Two threads on two CPUs: lock, run 5 ms, unlock. Without the lock each
    // activation would take 5 ms; with it they alternate (10 ms per pair).
    const ra_run r = run_rtapp(R"({ "tasks": { "t": { "instance": 2, "loop": 10,
        "lock": "m", "run": 5000, "unlock": "m" } } })", 2);
    ASSERT_TRUE(r.w->finished());
    sim_time last = 0;
    for (const auto& l : r.w->threads())
        last = std::max(last, l.p->exit_time);
    EXPECT_GE(last, msecs(100));
    EXPECT_LT(last, msecs(102));
}

TEST(rtapp_run, wait_and_signal_hand_work_over_and_barriers_meet)
{
    const ra_run r = run_rtapp(R"({ "tasks": {
        "producer": { "loop": 10, "run": 1000, "sleep": 1000, "lock": "m", "signal": "c",
                      "unlock": "m", "barrier": "b" },
        "consumer": { "loop": 10, "lock": "m", "wait": { "ref": "c", "mutex": "m" },
                      "unlock": "m", "run": 500, "barrier": "b" } } })", 2);
    ASSERT_TRUE(r.w->finished());
    EXPECT_TRUE(r.t->k.all_exited());
    EXPECT_EQ(thread(r, "consumer").activations, 10u);
    EXPECT_EQ(r.w->config().barrier_users.at("b"), 2u);
}

TEST(rtapp_run, suspend_and_resume_ping_pong_and_fork_starts_a_defined_task)
{
    const ra_run r = run_rtapp(R"({ "tasks": {
        "a": { "loop": 20, "run": 1000, "resume": "b", "suspend": "a" },
        "b": { "loop": 20, "suspend": "b", "run": 1000, "resume": "a" },
        "helper": { "instance": 0, "loop": 3, "run": 100 },
        "spawner": { "loop": 1, "fork": "helper", "sleep": 100 } } })", 2, msecs(500));
    ASSERT_TRUE(r.w->finished());
    EXPECT_GE(thread(r, "b").activations, 19u);
    const auto& h = thread(r, "helper-0");
    EXPECT_EQ(h.activations, 3u);
    EXPECT_EQ(h.p->tgid, thread(r, "spawner").p->tgid);
}

TEST(rtapp_run, the_duration_stops_looping_and_blocked_threads)
{
    const ra_run r = run_rtapp(R"({ "global": { "duration": 1 }, "tasks": {
        "spin": { "run": 3000, "sleep": 1000 },
        "stuck": { "suspend": "never" } } })", 2, msecs(200));
    ASSERT_TRUE(r.w->finished());
    EXPECT_TRUE(r.t->k.all_exited());
    EXPECT_EQ(r.w->duration(), msecs(200)) << "--duration overrides global.duration";
    for (const auto& l : r.w->threads()) {
        EXPECT_TRUE(l.exited);
        EXPECT_LT(l.p->exit_time, msecs(204));
        EXPECT_GE(l.p->exit_time, msecs(200));
    }
    EXPECT_NEAR(static_cast<double>(thread(r, "spin").activations), 50.0, 1.0);
}

TEST(rtapp_run, without_a_duration_an_endless_use_case_does_not_finish)
{
    const ra_run r = run_rtapp(R"({ "tasks": { "t": { "run": 100, "sleep": 100000 } } })", 1);
    EXPECT_FALSE(r.w->finished());
    EXPECT_THAT(r.w->report(), HasSubstr("use --duration"));
}

TEST(rtapp_options, a_file_is_required_and_bad_files_are_errors)
{
    auto err = [](const std::vector<std::string>& argv) -> std::string {
        try {
            make_workload(argv);
        } catch (const config_error& e) {
            return e.what();
        }
        return "(accepted)";
    };
    EXPECT_THAT(err({"rt-app"}), HasSubstr("expects one argument"));
    EXPECT_THAT(err({"rt-app", "/nonexistent/x.json"}), HasSubstr("/nonexistent/x.json"));
    EXPECT_THAT(err({"rt-app", "a.json", "--duration", "x"}), HasSubstr("'--duration'"));
}

/*
 * Every example of Debian's rt-app package parses and runs briefly, or is
 * refused with a reason naming what is not supported. The package is a test
 * dependency (scripts/install-deps.sh installs it): its absence is a failure.
 */
TEST(rtapp_examples, every_debian_example_runs_or_is_refused_with_a_reason)
{
    const std::filesystem::path dir = "/usr/share/doc/rt-app/examples";
    ASSERT_TRUE(std::filesystem::is_directory(dir))
        << dir << " is missing: install Debian's rt-app package by running scripts/install-deps.sh";
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
        if (e.path().extension() == ".json")
            files.push_back(e.path());
    std::sort(files.begin(), files.end());
    ASSERT_GE(files.size(), 20u);
    int ran = 0, downgraded = 0, ran_rt = 0;
    for (const auto& f : files) {
        std::unique_ptr<workload> w;
        try {
            w = make_workload({"rt-app", f.string(), "--duration", "0.1"});
        } catch (const config_error& e) {
            const std::string why = e.what();
            EXPECT_THAT(why, HasSubstr(f.string() + ":")) << "errors name the file and line";
            if (why.find("is not modelled") == std::string::npos) {
                EXPECT_THAT(why, ::testing::AnyOf(HasSubstr("rt-app 0.x syntax"),
                                                  HasSubstr("no \"tasks\" object")))
                    << f;
                continue;
            }
            // A scheduling request the model cannot honour: it runs when asked to downgrade.
            w = make_workload({"rt-app", f.string(), "--duration", "0.1", "--downgrade-unmodelled"});
            ++downgraded;
        }
        test_env t(4);
        t.k.set_check_level(check_level::sampled, 64);
        w->setup(t.k.sys());
        t.k.run(secs(5));
        EXPECT_TRUE(w->finished()) << f;
        EXPECT_TRUE(t.k.all_exited()) << f;
        EXPECT_THAT(w->report(), HasSubstr("[rt-app] <notice> use case ")) << f;
        ++ran;
        const auto& ra = dynamic_cast<const rtapp_workload&>(*w);
        bool rt = false;
        for (const auto& l : ra.threads())
            rt |= l.p && l.p->sched_class == &rt_sched_class;
        ran_rt += rt;
    }
    EXPECT_GE(ran, 17);
    EXPECT_EQ(downgraded, 1) << "tutorial/example8.json changes affinity per phase";
    EXPECT_EQ(ran_rt, 2) << "cpufreq_governor_efficiency's dvfs.json and calibration.json are "
                            "SCHED_FIFO";
}

// Issue 16: the reader recursed 50000 deep (a stack overflow), read /dev/zero until memory ran
// out, read a directory as an empty file, and an unknown key's task "had no event".
TEST(rtapp_json, nesting_depth_and_file_size_are_bounded)
{
    EXPECT_EQ(json_error("{\"tasks\":" + std::string(50000, '[') + std::string(50000, ']') + "}"),
              "t.json:1:73: nested more than 64 levels deep");
    EXPECT_EQ(json_error(std::string(64, '[') + std::string(64, ']')), "(accepted)");
    EXPECT_THAT(error_of([] { rtj_parse_file("/dev/zero"); }),
                HasSubstr("/dev/zero: the rt-app file is larger than the 16 MiB limit"));
    EXPECT_THAT(error_of([] { rtj_parse_file("/tmp"); }),
                HasSubstr("/tmp: '/tmp' is a directory, not a rt-app file"));
}

TEST(rtapp_parse, a_task_without_events_names_the_keys_it_did_not_understand)
{
    EXPECT_THAT(parse_error(R"({ "tasks": { "t1": { "bogus": 1000, "loop": 2 } } })"),
                HasSubstr("task 't1' has no event ('bogus' is not an rt-app property or event)"));
    EXPECT_THAT(parse_error(R"({ "tasks": { "t1": { "phases": { "p": { "x": 1, "y": 2 } } } } })"),
                HasSubstr("phase 'p' of task 't1' has no event ('x', 'y' are not an rt-app "
                          "property or event)"));
}
TEST(rtapp_parse, more_instances_than_a_kernel_can_run_are_refused)
{
    const std::string dir = ::testing::TempDir();
    const std::string f = dir + "/schedlab-rtapp-many.json";
    std::string text = R"({ "tasks": {)";
    for (int i = 0; i < 50; ++i)
        text += fmt::format(R"({}"t{}": {{ "instance": 100000, "run": 10 }})", i ? "," : "", i);
    text += "} }";
    std::ofstream(f) << text;
    EXPECT_THAT(error_of([&] {
                    make_workload({"rt-app", f});
                }),
                HasSubstr("50 tasks' instances = 5000000 tasks, more than a kernel can run"));
    std::remove(f.c_str());
}
} // namespace
} // namespace schedlab
