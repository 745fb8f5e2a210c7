# The test suite's acceptance tests in parallel (issue 37). Included from
# GNUmakefile; make test runs test-acceptance.
#
#   acc-shards        deal internal/provider's acceptance tests, in turn by
#                     name (go test -list), to ACC_SHARDS test processes
#   test-acceptance   run the shards and OpenTofu's subset (mk/opentofu.mk)
#                     at once, each process against a local mesh of its own
#
# Each test process starts its own local mesh in TestMain
# (internal/provider/acc_main_test.go: its own kube-apiservers, etcds and
# directory), and every test works in directories of its own, so tests in
# two processes share no cluster, no Terraform state and no working
# directory; within one process they run one after the other as before.
# Shard 0 is `go test ./...`: every package, unit tests included, without
# the tests dealt to the other shards (-skip), so a test added to the
# package runs on the next run without being listed anywhere. No clock
# decides which test runs where, and a test's outcome depends on no other
# process. ACC_SHARDS=1 runs them one process, as before.

ACC_SHARDS ?= 2
# What shard 0 tests (./internal/provider alone to time the package).
ACC_SHARD0_PKGS ?= ./...
ACC_SHARD_DIR := $(CURDIR)/.acc-shards
ACC_ENV = TF_ACC=1 LOCAL_MESH_BIN="$(LOCAL_MESH_BIN)" MESH_EXAMPLE_CASES="$(EXAMPLE_CASES)"
ACC_OTHER_SHARDS := $(shell seq 1 $$(( $(ACC_SHARDS) - 1 )) 2>/dev/null)

.PHONY: acc-shards test-acceptance test-acc-shard-0 $(addprefix test-acc-shard-,$(ACC_OTHER_SHARDS))

acc-shards:
	@rm -rf "$(ACC_SHARD_DIR)" && mkdir -p "$(ACC_SHARD_DIR)"
	@names=$$($(GO) test -list '^TestAcc' ./internal/provider) || { echo "$$names"; exit 1; }; \
	echo "$$names" | grep '^TestAcc' | sort | \
	  awk -v n=$(ACC_SHARDS) -v dir="$(ACC_SHARD_DIR)" '{ s = (NR - 1) % n; if (s > 0) print > (dir "/shard-" s) }'
	@for s in $(ACC_OTHER_SHARDS); do touch "$(ACC_SHARD_DIR)/shard-$$s"; \
	  echo "acceptance shard $$s: $$(wc -l < "$(ACC_SHARD_DIR)/shard-$$s") tests of internal/provider"; done

# Shard 0: every package, without the tests the other shards run.
test-acc-shard-0:
	@skip=$$(cat /dev/null $(addprefix "$(ACC_SHARD_DIR)"/shard-,$(ACC_OTHER_SHARDS)) | paste -sd'|'); \
	echo "$(ACC_ENV) $(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(TESTARGS) -skip '^($$skip)$$' $(ACC_SHARD0_PKGS)"; \
	$(ACC_ENV) $(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(TESTARGS) -skip "^($$skip)\$$" $(ACC_SHARD0_PKGS)

# Shard k (1 to ACC_SHARDS-1): the tests dealt to it.
define acc-shard-rule
test-acc-shard-$(1):
	@run=$$$$(paste -sd'|' "$$(ACC_SHARD_DIR)/shard-$(1)"); \
	if [ -z "$$$$run" ]; then echo "acceptance shard $(1): no tests"; exit 0; fi; \
	echo "$$(ACC_ENV) $$(GO) test -count=1 -timeout $$(TEST_TIMEOUT) $$(TESTARGS) -run '^($$$$run)$$$$' ./internal/provider"; \
	$$(ACC_ENV) $$(GO) test -count=1 -timeout $$(TEST_TIMEOUT) $$(TESTARGS) -run "^($$$$run)\$$$$" ./internal/provider
endef
$(foreach k,$(ACC_OTHER_SHARDS),$(eval $(call acc-shard-rule,$(k))))

# -Otarget prints each process's output whole when it ends.
test-acceptance: acc-shards opentofu-bin
	@rm -rf "$(EXAMPLE_CASES)"
	@$(MAKE) --no-print-directory -j$$(( $(ACC_SHARDS) + 1 )) -Otarget \
	  test-acc-shard-0 $(addprefix test-acc-shard-,$(ACC_OTHER_SHARDS)) test-opentofu
