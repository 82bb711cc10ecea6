// SPDX-License-Identifier: GPL-2.0-only
#include "cli/mpi.h"

#include "cli/interrupt.h"
#include "experiment/result_json.h"
#include "sim/config_error.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>

#ifdef SCHEDLAB_HAVE_MPI
#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#endif

namespace schedlab {

int launched_ranks()
{
    // Open MPI's mpirun, then the PMI and PMIx variables that srun and other launchers set.
    for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"}) {
        const char* v = std::getenv(var);
        if (!v || !*v)
            continue;
        if (std::strcmp(var, "SLURM_NTASKS") == 0 && !std::getenv("PMIX_RANK") &&
            !std::getenv("PMI_RANK"))
            continue; // inside an allocation, but not started as an MPI task
        const int n = std::atoi(v);
        return n > 0 ? n : 1;
    }
    return 1;
}

mpi_world& mpi_world::instance()
{
    static mpi_world world; // MPI itself is one per process
    return world;
}

#ifdef SCHEDLAB_HAVE_MPI

bool mpi_built_in()
{
    return true;
}

mpi_world& mpi_world::get()
{
    mpi_world& world = instance();
    if (!world.initialised_ && launched_ranks() > 1) {
        // Block SIGINT and SIGTERM before MPI starts its threads, so that they inherit the
        // block and the interrupt guard's thread is the one that takes the signals.
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGINT);
        sigaddset(&s, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &s, nullptr);
        int provided = 0;
        MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
        world.initialised_ = true;
        MPI_Comm_rank(MPI_COMM_WORLD, &world.rank_);
        MPI_Comm_size(MPI_COMM_WORLD, &world.size_);
    }
    return world;
}

void mpi_world::finalize()
{
    mpi_world& w = instance();
    if (w.initialised_) {
        MPI_Finalize();
        w.initialised_ = false;
    }
}

void mpi_world::abort_if_distributed(int rc)
{
    mpi_world& w = instance();
    if (w.initialised_ && w.size_ > 1)
        MPI_Abort(MPI_COMM_WORLD, rc);
}

namespace {

constexpr int tag_ready = 1; ///< worker -> rank 0: the last result (or nothing), and "next, please"
constexpr int tag_work = 2;  ///< rank 0 -> worker: a plan index, or -1 for "no more"

/// A finished run as it travels: its plan index (8 bytes), then its schedlab-result-v1 JSON.
std::string pack(long long index, const run_result& r)
{
    std::string out(sizeof index, '\0');
    std::memcpy(out.data(), &index, sizeof index);
    out += to_json(r).dump();
    return out;
}

std::pair<std::size_t, run_result> unpack(const std::vector<char>& buf, int from)
{
    long long index = -1;
    if (buf.size() < sizeof index)
        throw std::runtime_error(fmt::format("a truncated result from rank {}", from));
    std::memcpy(&index, buf.data(), sizeof index);
    const auto j = nlohmann::ordered_json::parse(buf.begin() + sizeof index, buf.end());
    return {static_cast<std::size_t>(index),
            run_result_from_json(j, fmt::format("the result of run {} from rank {}", index, from))};
}

void worker_loop(const std::vector<run_spec>& runs)
{
    std::string payload; // the first request carries no result
    while (true) {
        MPI_Send(payload.data(), static_cast<int>(payload.size()), MPI_CHAR, 0, tag_ready,
                 MPI_COMM_WORLD);
        long long index = -1;
        MPI_Recv(&index, 1, MPI_LONG_LONG, 0, tag_work, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (index < 0 || static_cast<std::size_t>(index) >= runs.size())
            return;
        payload = pack(index, execute_run(runs[static_cast<std::size_t>(index)]));
    }
}

} // namespace

void mpi_world::run_plan(std::ostream& err, results_store* store, const std::vector<run_spec>& runs,
                         const std::vector<std::string>& keys, const shard& sh, int jobs,
                         bool progress_tty)
{
    if (!is_root()) {
        const interrupt_guard guard([](int) {}); // rank 0 says what was kept
        worker_loop(runs);
        return;
    }
    store_run_stats st;
    const std::vector<std::size_t> todo = missing_runs(*store, keys, sh, st);
    err << fmt::format("schedlab: {} runs planned{}; {} already in {}, {} to run on {} MPI ranks\n",
                       st.planned, shard_note(sh, st), st.stored_before, store->path(), todo.size(),
                       size_);
    store_writer writer(*store, todo.size());
    const interrupt_guard guard([&](int signo) {
        const std::size_t written = writer.close_for_exit();
        err << interrupted_message(signal_name(signo), sh, st, written, store->path());
        err.flush();
    });
    progress_meter meter(err, progress_tty);

    // Rank 0's own runs: threads taking indices from the same counter as the other ranks.
    std::atomic<std::size_t> next{0};
    std::mutex lock;
    std::condition_variable cv;
    std::deque<std::pair<std::size_t, run_result>> local_done;
    std::exception_ptr local_error;
    auto local = [&] {
        while (true) {
            const std::size_t j = next.fetch_add(1);
            if (j >= todo.size())
                return;
            try {
                run_result r = execute_run(runs[todo[j]]);
                const std::lock_guard<std::mutex> g(lock);
                local_done.emplace_back(todo[j], std::move(r));
            } catch (...) {
                const std::lock_guard<std::mutex> g(lock);
                local_error = std::current_exception();
                next = todo.size(); // hand out nothing more
            }
            cv.notify_one();
        }
    };
    std::vector<std::thread> pool;
    for (int t = 0; t < std::max(jobs, 1); ++t)
        pool.emplace_back(local);

    std::size_t done = 0;
    int remote_active = size_ - 1;
    std::vector<char> buf;
    std::vector<std::size_t> per_rank(static_cast<std::size_t>(size_), 0);
    auto store_one = [&](std::size_t index, const run_result& r, int from) {
        writer.put(keys[index], r);
        ++per_rank[static_cast<std::size_t>(from)];
        meter(++done, todo.size());
    };
    try {
        while (remote_active > 0 || done < todo.size()) {
            bool progressed = false;
            int flag = 0;
            MPI_Status status;
            MPI_Iprobe(MPI_ANY_SOURCE, tag_ready, MPI_COMM_WORLD, &flag, &status);
            if (flag) {
                int count = 0;
                MPI_Get_count(&status, MPI_CHAR, &count);
                buf.resize(static_cast<std::size_t>(count));
                MPI_Recv(buf.data(), count, MPI_CHAR, status.MPI_SOURCE, tag_ready, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                if (count > 0) {
                    const auto [index, r] = unpack(buf, status.MPI_SOURCE);
                    if (index >= keys.size())
                        throw std::runtime_error(fmt::format("rank {} sent run {} of a plan of {}",
                                                             status.MPI_SOURCE, index,
                                                             keys.size()));
                    store_one(index, r, status.MPI_SOURCE);
                }
                const std::size_t j = next.fetch_add(1);
                const long long index = j < todo.size() ? static_cast<long long>(todo[j]) : -1;
                remote_active -= index < 0;
                MPI_Send(&index, 1, MPI_LONG_LONG, status.MPI_SOURCE, tag_work, MPI_COMM_WORLD);
                progressed = true;
            }
            std::unique_lock<std::mutex> lk(lock);
            if (local_error)
                std::rethrow_exception(local_error);
            while (!local_done.empty()) {
                auto item = std::move(local_done.front());
                local_done.pop_front();
                lk.unlock();
                store_one(item.first, item.second, 0);
                lk.lock();
                progressed = true;
            }
            if (!progressed) // nothing to do: wait for a local result, or look for messages again
                             // soon
                cv.wait_for(lk, std::chrono::milliseconds(2), [&] { return !local_done.empty(); });
        }
    } catch (...) {
        for (auto& t : pool)
            t.join();
        throw;
    }
    for (auto& t : pool)
        t.join();
    if (!todo.empty()) {
        std::string counts;
        for (std::size_t n : per_rank)
            counts += fmt::format(" {}", n);
        err << fmt::format("schedlab: runs per rank (0 to {}):{}\n", size_ - 1, counts);
    }
}

#else // no MPI

bool mpi_built_in()
{
    return false;
}

mpi_world& mpi_world::get()
{
    mpi_world& world = instance();
    if (const int n = launched_ranks(); n > 1)
        throw config_error(
            "mpirun",
            fmt::format(
                "started as one of {} MPI ranks, but this schedlab was built without MPI, so every "
                "rank "
                "would run the whole sweep; rebuild with Open MPI (libopenmpi-dev, CMake option "
                "SCHEDLAB_MPI) or split the sweep with --shard i/N and `schedlab store merge`",
                n));
    return world;
}

void mpi_world::finalize() {}

void mpi_world::abort_if_distributed(int) {}

void mpi_world::run_plan(std::ostream&, results_store*, const std::vector<run_spec>&,
                         const std::vector<std::string>&, const shard&, int, bool)
{
    throw config_error("mpirun", "this schedlab was built without MPI");
}

#endif

} // namespace schedlab
