# SPDX-License-Identifier: GPL-2.0-only
# The two set-up commands of the README:
#   make demo   installs dependencies, builds (Release) and runs the headline example
#   make test   installs dependencies, builds and runs the whole test suite
JOBS ?= 2
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
# Seconds per fuzz target (make fuzz FUZZ_TIME=600 for a long run; CI uses 30).
FUZZ_TIME ?= 60
CMAKE_FLAGS ?=

.PHONY: all deps build demo test test-asan bench fuzz clean format

all: build

deps:
	./scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/src/cli/schedlab topology milan-2s | head -n 12
	./$(BUILD)/src/cli/schedlab run --machine milan-2s --kernel 6.6 --seed 7 -- \
	    perf bench sched messaging -g 4 -p -l 100

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The suite again under AddressSanitizer + UndefinedBehaviorSanitizer (CI runs both): a Debug
# build (no NDEBUG: every invariant checked after every __schedule()) with the src/ libraries
# at -O1, where the simulations run faster than at -O0 (docs/testing.md, "CI"). GCC 12's
# -Wmaybe-uninitialized is off there: at -O1 with the sanitizers it reports libstdc++'s own
# std::regex state (std::function members, workload/replay.cc), a false positive; the
# Release build (make test, -O3) keeps the warning as an error.
test-asan: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSCHEDLAB_SANITIZE=ON \
	    "-DSCHEDLAB_LIBRARY_FLAGS=-O1;-Wno-maybe-uninitialized" -DSCHEDLAB_BUILD_BENCH=OFF \
	    $(CMAKE_FLAGS)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS)

# The libFuzzer targets of tests/fuzz (clang 14, ASan + UBSan), each for FUZZ_TIME seconds,
# JOBS at a time; docs/testing.md.
fuzz: deps
	cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" \
	    -DCMAKE_CXX_COMPILER=clang++-14 -DSCHEDLAB_FUZZ=ON $(CMAKE_FLAGS)
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_targets
	./scripts/run-fuzz.sh $(FUZZ_BUILD) $(FUZZ_TIME) $(JOBS)

# The speed table (docs/performance.md), then the Google Benchmark micro-benchmarks.
bench: build
	./$(BUILD)/bench/schedlab_speed
	./$(BUILD)/bench/schedlab_bench

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
