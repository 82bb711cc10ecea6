// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * `mpirun -np N schedlab sweep SPEC` (or srun under Slurm): the ranks share a
 * sweep's runs on Open MPI. Every rank plans the sweep from the same spec, so
 * only run indices and results travel. Rank 0 owns the store: it hands out
 * the missing runs one at a time to whichever rank asks (ranks take runs
 * dynamically, so long and short runs balance), runs some itself on a thread,
 * and writes each result as it arrives, so every result reaches the store
 * exactly once and the store equals that of a single-process sweep.
 *
 * Built in when CMake finds MPI (option SCHEDLAB_MPI). MPI is initialised
 * only when the process was started by an MPI launcher (mpirun's
 * OMPI_COMM_WORLD_SIZE, PMI or PMIx variables); otherwise, and in a build
 * without MPI, the world is this one process.
 */
#include "store/execute.h"

#include <ostream>
#include <string>
#include <vector>

namespace schedlab {

/// The number of ranks an MPI launcher says this process is one of (1 when not launched by one).
int launched_ranks();

class mpi_world {
public:
    /// The world, initialising MPI on the first call when launched by mpirun or srun with
    /// more than one rank. config_error when launched so by a schedlab built without MPI.
    static mpi_world& get();
    /// MPI_Finalize, if MPI was initialised (main calls it before returning).
    static void finalize();
    /// After an error on one rank: MPI_Abort, which ends every rank (no-op without MPI).
    static void abort_if_distributed(int rc);

    int rank() const { return rank_; }
    int size() const { return size_; }
    bool is_root() const { return rank_ == 0; }

    /// Every rank calls it with the same plan; rank 0 passes the store, the others nullptr.
    /// Returns when every run of the shard is stored (on rank 0) or handed out (others).
    void run_plan(std::ostream& err, results_store* store, const std::vector<run_spec>& runs,
                  const std::vector<std::string>& keys, const shard& sh, int jobs,
                  bool progress_tty);

private:
    mpi_world() = default;
    static mpi_world& instance(); ///< the process's one world, not initialised
    int rank_ = 0, size_ = 1;
    bool initialised_ = false;
};

/// Whether this schedlab was built with MPI.
bool mpi_built_in();

} // namespace schedlab
