# Benchmarks (docs/performance.md). Included from GNUmakefile; also usable
# on its own: make -f mk/bench.mk bench
#
#   bench            bench-translate, bench-fleet and bench-publish, then
#                    the provider under real Terraform
#                    against a local mesh vs. the raw server-side-apply
#                    floor, M intents for each M in BENCH_INTENTS, medians
#                    of BENCH_RUNS runs; prints the tables (also in
#                    $(BENCH_DIR)/results.md, raw numbers in results.json).
#                    About 20 minutes on 2 quiet cores, with bench-fleet
#                    (4.4 GB of memory at 50 fake clusters) and bench-publish.
#   bench-translate  Go benchmarks of the translator (500 intents, 50 clusters)
#   bench-fleet      the engine at BENCH_FLEET_INTENTS intents on 10 and 50
#                    fake (in-memory) clusters, each step against its floor
#                    on the same fakes; plan and apply per cluster and per
#                    intent (BENCH_FLEET_CLUSTERS, BENCH_FLEET_RUNS)
#   bench-publish    issue 35: publishing pull clusters' artifacts against
#                    go-containerregistry alone, and the registry requests
#                    of a refresh per cluster
#
# The local mesh of bench is its own (under $(BENCH_DIR)/mesh), started and
# stopped by the driver; it does not touch make local-mesh's.

GO ?= go

BENCH_ROOT        := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
BENCH_DIR         ?= $(BENCH_ROOT)/.bench
BENCH_INTENTS     ?= 10,100,500
# Runs per M, in the order of BENCH_INTENTS. BENCH_BUDGET stops further runs
# (never the first of an M) once that much time has passed.
BENCH_RUNS        ?= 5,3,3
BENCH_BUDGET      ?= 25m
BENCH_CLUSTERS    ?= east,west,onprem
# terraform -parallelism (Terraform's default); the floor keeps as many
# requests in flight per cluster.
BENCH_PARALLELISM ?= 10
# bench-fleet: numbers of fake clusters, and runs for each.
BENCH_FLEET_CLUSTERS ?= 10,50
BENCH_FLEET_RUNS     ?= 3,1
BENCH_FLEET_INTENTS  ?= 500
BENCH_BIN         := $(BENCH_DIR)/bin

ifeq ($(origin LOCAL_MESH_BIN),undefined)
LOCAL_MESH_BIN := $(shell $(BENCH_ROOT)/tools/build-binaries.sh --print-dir 2>/dev/null)
endif

.PHONY: bench bench-build bench-translate bench-fleet bench-publish

# The provider (what Terraform runs, through the launcher that records its
# peak RSS), the launcher in the dev_overrides directory, the floor, the
# engine driver and the benchmark driver.
bench-build:
	@command -v terraform >/dev/null 2>&1 || { echo "make bench needs the Terraform CLI on PATH." >&2; exit 1; }
	@mkdir -p $(BENCH_BIN)/overrides
	$(GO) -C $(BENCH_ROOT) build -o $(BENCH_BIN)/terraform-provider-mesh .
	$(GO) -C $(BENCH_ROOT) build -o $(BENCH_BIN)/overrides/terraform-provider-mesh ./bench/launcher
	$(GO) -C $(BENCH_ROOT) build -o $(BENCH_BIN)/floor ./bench/floor
	$(GO) -C $(BENCH_ROOT) build -o $(BENCH_BIN)/engine ./bench/engine
	$(GO) -C $(BENCH_ROOT) build -o $(BENCH_BIN)/bench ./bench

bench: bench-build bench-translate bench-fleet bench-publish
	@$(BENCH_ROOT)/tools/build-binaries.sh >/dev/null
	$(BENCH_BIN)/bench -work $(BENCH_DIR) -bin-dir "$(LOCAL_MESH_BIN)" \
		-launcher-dir $(BENCH_BIN)/overrides -provider $(BENCH_BIN)/terraform-provider-mesh -floor $(BENCH_BIN)/floor -engine $(BENCH_BIN)/engine \
		-intents $(BENCH_INTENTS) -runs $(BENCH_RUNS) -budget $(BENCH_BUDGET) \
		-clusters $(BENCH_CLUSTERS) -parallelism $(BENCH_PARALLELISM)

# The translator alone five times (a shared machine's noise shows; read the
# median), then the plan benchmark once.
bench-translate:
	$(GO) -C $(BENCH_ROOT) test -run '^$$' -bench 'Translate' -benchtime 20x -count 5 ./internal/translate/
	$(GO) -C $(BENCH_ROOT) test -run '^$$' -bench 'Plan' -benchtime 20x -count 1 ./internal/translate/

# The engine on fake clusters at fleet scale (bench/fleet, bench/gen/fleet.go).
bench-fleet:
	$(GO) -C $(BENCH_ROOT) run ./bench/fleet -clusters $(BENCH_FLEET_CLUSTERS) -runs $(BENCH_FLEET_RUNS) \
		-intents $(BENCH_FLEET_INTENTS) -parallelism $(BENCH_PARALLELISM)

# Issue 35: publishing pull clusters against go-containerregistry alone
# (bench/publish, bench/gen/publish.go).
BENCH_PUBLISH_RUNS ?= 1
bench-publish:
	$(GO) -C $(BENCH_ROOT) run ./bench/publish -clusters $(BENCH_CLUSTERS) -intents $(BENCH_FLEET_INTENTS) \
		-runs $(BENCH_PUBLISH_RUNS) -parallelism $(BENCH_PARALLELISM)
