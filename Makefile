# SPDX-License-Identifier: GPL-2.0-only
# The two set-up commands of the README:
#   make demo   installs dependencies, builds (Release) and runs the headline example
#   make test   installs dependencies, builds and runs the whole test suite
JOBS ?= 2
BUILD ?= build
ASAN_BUILD ?= build-asan
# make fuzz uses the sanitizer build of make test-asan (one build for both).
FUZZ_BUILD ?= $(ASAN_BUILD)
# Seconds per fuzz target (make fuzz FUZZ_TIME=600 for a long run; CI uses 30).
FUZZ_TIME ?= 60
CMAKE_FLAGS ?=

# make pgo: the profile-guided build's directory (docs/performance.md, "LTO and PGO").
PGO_BUILD ?= build-pgo

.PHONY: all deps build demo test test-asan bench fuzz pgo clean format

all: build

deps:
	./scripts/install-deps.sh

# Release; the test programs' own files at -O1 (SCHEDLAB_TEST_FLAGS): they are set-up and
# assertions, and took 23% less CPU to compile than at -O3 (595.0 -> 459.9 CPU s for the 15
# test programs, gcc 12: docs/testing.md, "Running the tests"; measured in `git show
# cea2958:docs/testing.md`, "Test programs at -O1, unity batches, the sanitizer build's cold
# layers at -O0"); the libraries they test, the CLI and the benchmarks keep -O3.
RELEASE_CMAKE = -DCMAKE_BUILD_TYPE=Release -DSCHEDLAB_TEST_FLAGS=-O1

build: deps
	cmake -S . -B $(BUILD) -G Ninja $(RELEASE_CMAKE) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/src/cli/schedlab topology milan-2s | head -n 12
	./$(BUILD)/src/cli/schedlab run --machine milan-2s --kernel 6.6 --seed 7 -- \
	    perf bench sched messaging -g 4 -p -l 100

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The suite again under AddressSanitizer + UndefinedBehaviorSanitizer (CI runs both), and the
# libFuzzer targets of tests/fuzz, from ONE clang 14 build (SAN_CMAKE; docs/testing.md, "CI"):
# a Debug build (no NDEBUG: every invariant checked after every __schedule()) whose src/
# libraries are compiled at -O1 (the simulations the tests run are library code; the layers
# the simulations and the fuzz targets do not run, report, cli, store and analysis, at -O0) with
# libFuzzer's coverage instrumentation (SCHEDLAB_FUZZ); the test programs stay at Debug's -O0
# without it. `make test-asan` builds everything there (tests and fuzz targets) and runs the
# suite; `make fuzz` configures the same directory the same way and builds only the fuzz
# targets, then runs each for FUZZ_TIME seconds, JOBS at a time. Debug info is line tables
# only (what the sanitizers' and libFuzzer's stack traces use): -g's full debug info costs 17%
# of the compile time of a test file (src/sched/fair_balance_test.cc, 8.4 -> 6.9 CPU s).
# SCHEDLAB_SKIP_BROWSER=1: the HTML report's browser tests (src/report/html_test.cc) render
# their pages here, under the sanitizers, and skip (visibly, as ctest's "Skipped") the step that
# opens them in headless Chromium, which is not our code and not instrumented; `make test` runs
# them whole. The eight were 90 s of this suite's test time at eb1637a (docs/testing.md, "Time").
SAN_CMAKE = -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
	    -DCMAKE_C_FLAGS_DEBUG=-gline-tables-only -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only \
	    -DSCHEDLAB_SANITIZE=ON -DSCHEDLAB_FUZZ=ON -DSCHEDLAB_LIBRARY_FLAGS=-O1 \
	    "-DSCHEDLAB_COLD_LIBRARIES=report;cli;store;analysis" -DSCHEDLAB_COLD_LIBRARY_FLAGS=-O0 \
	    -DSCHEDLAB_BUILD_BENCH=OFF

test-asan: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja $(SAN_CMAKE) $(CMAKE_FLAGS)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && SCHEDLAB_SKIP_BROWSER=1 ctest --output-on-failure -j $(JOBS)

fuzz: deps
	cmake -S . -B $(FUZZ_BUILD) -G Ninja $(SAN_CMAKE) $(CMAKE_FLAGS)
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_targets
	./scripts/run-fuzz.sh $(FUZZ_BUILD) $(FUZZ_TIME) $(JOBS)

# The speed table (docs/performance.md), then the Google Benchmark micro-benchmarks. At the build
# type's -O3, and schedlab_speed linked with LTO, even in a build directory that .ci/run
# configured with -DSCHEDLAB_BENCH_FLAGS=-O1 (a target-specific variable: `build` runs with it
# too).
bench: override CMAKE_FLAGS += -DSCHEDLAB_BENCH_FLAGS=
bench: build
	./$(BUILD)/bench/schedlab_speed
	./$(BUILD)/bench/schedlab_bench

# Profile-guided optimisation, opt-in (docs/performance.md, "LTO and PGO"): an instrumented
# Release build of the CLI in $(PGO_BUILD) (-DSCHEDLAB_PGO=generate; without LTO, which the
# profiles do not need), the training runs of scripts/pgo-train.sh, then the same directory
# rebuilt with the profiles (-DSCHEDLAB_PGO=use, with LTO unless CMAKE_FLAGS has
# -DSCHEDLAB_LTO=OFF) and its golden digests
# checked. Run $(PGO_BUILD)/src/cli/schedlab, or $(PGO_BUILD)/bench/schedlab_speed. Profiles
# are of the sources they were made from: run `make pgo` again after an edit.
pgo: deps
	rm -rf $(PGO_BUILD)/pgo-profile
	cmake -S . -B $(PGO_BUILD) -G Ninja $(RELEASE_CMAKE) $(CMAKE_FLAGS) -DSCHEDLAB_LTO=OFF -DSCHEDLAB_PGO=generate
	cmake --build $(PGO_BUILD) -j $(JOBS) --target schedlab
	./scripts/pgo-train.sh $(PGO_BUILD)
	cmake -S . -B $(PGO_BUILD) -G Ninja $(RELEASE_CMAKE) -DSCHEDLAB_LTO=ON $(CMAKE_FLAGS) -DSCHEDLAB_PGO=use
	cmake --build $(PGO_BUILD) -j $(JOBS) --target schedlab schedlab_speed golden_test
	$(PGO_BUILD)/tests/golden_test

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(PGO_BUILD)
