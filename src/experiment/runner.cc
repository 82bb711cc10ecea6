// SPDX-License-Identifier: GPL-2.0-only
#include "experiment/runner.h"

#include "sim/simulation.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

namespace schedlab {

int default_jobs()
{
    const unsigned n = std::thread::hardware_concurrency();
    return n ? static_cast<int>(n) : 1;
}

void run_each(const std::vector<run_spec>& specs, int jobs, const result_fn& on_result,
              const progress_fn& progress, const std::atomic<bool>* stop)
{
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::size_t done = 0;
    std::mutex result_lock;

    // Each distinct input is prepared once (a replay reads its trace there), shared by its
    // runs and dropped after its last one: at most one per run in flight is held.
    struct shared_input {
        std::once_flag once;
        std::shared_ptr<const prepared_run> prepared;
        std::size_t runs_left = 0;
    };
    std::vector<std::shared_ptr<shared_input>> input_of(specs.size());
    {
        std::map<std::string, std::shared_ptr<shared_input>> by_inputs;
        for (std::size_t i = 0; i < specs.size(); ++i) {
            auto& in = by_inputs[inputs_but_seed(specs[i])];
            if (!in)
                in = std::make_shared<shared_input>();
            ++in->runs_left;
            input_of[i] = in;
        }
    }
    std::mutex inputs_lock;
    const auto run_one = [&](std::size_t i) {
        shared_input& in = *input_of[i];
        std::call_once(in.once, [&] { in.prepared = prepare_run(specs[i]); });
        run_result r = execute_run_as(*in.prepared, specs[i]);
        const std::lock_guard<std::mutex> g(inputs_lock);
        if (--in.runs_left == 0)
            in.prepared.reset();
        return r;
    };

    auto worker = [&] {
        while (!failed.load() && !(stop && stop->load())) {
            const std::size_t i = next.fetch_add(1);
            if (i >= specs.size())
                return;
            try {
                run_result r = run_one(i);
                const std::lock_guard<std::mutex> g(result_lock);
                on_result(i, std::move(r));
                ++done;
                if (progress)
                    progress(done, specs.size());
            } catch (...) {
                const std::lock_guard<std::mutex> g(result_lock);
                if (!error)
                    error = std::current_exception();
                failed = true;
            }
        }
    };

    const std::size_t nr_threads =
        std::min<std::size_t>(static_cast<std::size_t>(std::max(jobs, 1)), specs.size());
    if (nr_threads <= 1) {
        worker();
    } else {
        std::vector<std::thread> pool;
        for (std::size_t t = 0; t < nr_threads; ++t)
            pool.emplace_back(worker);
        for (auto& t : pool)
            t.join();
    }
    if (error)
        std::rethrow_exception(error);
}

std::vector<run_result> run_all(const std::vector<run_spec>& specs, int jobs,
                                const progress_fn& progress)
{
    // Every user error surfaces here, before the first simulation starts. The seed
    // does not change what is valid, so each distinct input is checked once.
    std::set<std::string> checked;
    for (const run_spec& s : specs)
        if (checked.insert(inputs_but_seed(s)).second)
            prepare_run(s);
    std::vector<run_result> results(specs.size());
    run_each(
        specs, jobs, [&](std::size_t i, run_result&& r) { results[i] = std::move(r); }, progress);
    return results;
}

namespace {

std::string clock_string(double s)
{
    const long t = std::lround(s);
    if (t >= 3600)
        return fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60);
    return fmt::format("{}:{:02}", t / 60, t % 60);
}

} // namespace

std::string format_progress(std::size_t done, std::size_t total, double elapsed_s, bool tty,
                            int bar_width)
{
    const double frac = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
    const int pct = static_cast<int>(std::floor(frac * 100));
    // ETA: the mean time per finished run so far, times the runs left.
    std::string eta = "?";
    if (done > 0) {
        const double left = elapsed_s / static_cast<double>(done) * static_cast<double>(total - done);
        eta = tty ? clock_string(left) : fmt::format("{:.0f} s", left);
    }
    if (tty) {
        const int filled = static_cast<int>(std::floor(frac * bar_width));
        return fmt::format("\r[{}{}] {:>{}}/{}  {:3}%  elapsed {}  ETA {}\x1b[K",
                           std::string(static_cast<std::size_t>(filled), '#'),
                           std::string(static_cast<std::size_t>(bar_width - filled), '.'), done,
                           fmt::format("{}", total).size(), total, pct, clock_string(elapsed_s), eta);
    }
    return fmt::format("schedlab: {}/{} runs done ({}%), elapsed {:.0f} s, ETA {}\n", done, total,
                       pct, elapsed_s, eta);
}

progress_meter::progress_meter(std::ostream& out, bool tty)
    : out_(out), tty_(tty), start_(std::chrono::steady_clock::now())
{
}

void progress_meter::operator()(std::size_t done, std::size_t total)
{
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (!tty_ && done != total && last_line_s_ >= 0 && elapsed - last_line_s_ < 1.0)
        return;
    last_line_s_ = elapsed;
    out_ << format_progress(done, total, elapsed, tty_);
    if (tty_ && done == total)
        out_ << "\n";
    out_.flush();
}

std::string format_run_progress(double simulated_s, u64 events, double elapsed_s)
{
    const double rate = elapsed_s > 0 ? simulated_s / elapsed_s : 0;
    return fmt::format("\rschedlab run: simulated {:.3f} s, {:.1f} M events, {:.3g} simulated s/s, "
                       "elapsed {}\x1b[K",
                       simulated_s, static_cast<double>(events) / 1e6, rate,
                       clock_string(elapsed_s));
}

run_progress_line::run_progress_line(std::ostream& out)
    : out_(out), start_(std::chrono::steady_clock::now())
{
}

void run_progress_line::operator()(const simulation& sim)
{
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (elapsed - last_s_ < 0.25)
        return;
    last_s_ = elapsed;
    drawn_ = true;
    out_ << format_run_progress(static_cast<double>(sim.now()) / 1e9, sim.events_fired(), elapsed);
    out_.flush();
}

void run_progress_line::finish()
{
    if (!drawn_)
        return;
    drawn_ = false;
    out_ << "\r\x1b[K";
    out_.flush();
}

} // namespace schedlab
