# OpenTofu in the test suite (issue 28). Included from GNUmakefile; make
# test runs test-opentofu after the suite under Terraform.
#
#   opentofu-bin   build OpenTofu's tofu from the module tools/opentofu pins
#                  (cached like the local mesh's binaries; cold, 25 min
#                  measured on two cores shared with other builds); fails
#                  with a message saying so when it cannot be built
#   test-opentofu  a subset of the acceptance tests under OpenTofu, against
#                  their own local mesh (2 min 20 s measured): apply, no-op plan, prune
#                  and import-by-id of mesh_cluster (terraform-plugin-testing
#                  with TF_ACC_TERRAFORM_PATH), import of a lost state with
#                  import blocks and -generate-config-out, tamper-evident
#                  drift, a team module from two roots, destroy in each

GO ?= go

OPENTOFU_ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)

# OPENTOFU_BIN given (an OpenTofu 1.11 binary of your own) is used as it
# is; otherwise the one tools/build-opentofu.sh builds and caches.
ifeq ($(origin OPENTOFU_BIN),undefined)
OPENTOFU_BIN := $(shell $(OPENTOFU_ROOT)/tools/build-opentofu.sh --print-path 2>/dev/null)
OPENTOFU_BUILD := 1
endif

# The tests of the subset; TestAccCLI_isTheOneAsked fails unless they
# really run OpenTofu.
OPENTOFU_TESTS ?= ^(TestAccCLI_isTheOneAsked|TestAccMeshCluster_lifecycle|TestAccImport_lostState|TestAccReliability_tamperEvidentDrift|TestAccTeamModule_twoRoots)$$

.PHONY: opentofu-bin test-opentofu

opentofu-bin:
ifeq ($(OPENTOFU_BUILD),1)
	@$(OPENTOFU_ROOT)/tools/build-opentofu.sh >/dev/null || { \
	  echo "make: OpenTofu could not be built (see above), so the acceptance tests cannot run under it. Fix the build (tools/opentofu, tools/build-opentofu.sh) or set OPENTOFU_BIN to an OpenTofu 1.11 binary."; exit 1; }
else
	@echo "tofu: $(OPENTOFU_BIN) (OPENTOFU_BIN; not built here)"
endif

test-opentofu: opentofu-bin
	@test -x "$(OPENTOFU_BIN)" || { echo "make: OPENTOFU_BIN=$(OPENTOFU_BIN) is not an executable OpenTofu."; exit 1; }
	TF_ACC=1 LOCAL_MESH_BIN="$(LOCAL_MESH_BIN)" MESH_ACC_OPENTOFU="$(OPENTOFU_BIN)" \
		$(GO) -C $(OPENTOFU_ROOT) test -count=1 -timeout 20m -run '$(OPENTOFU_TESTS)' ./internal/provider
