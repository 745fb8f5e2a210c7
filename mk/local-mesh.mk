# Local mesh of real Kubernetes API servers for demos and acceptance tests
# (DESIGN.md section 5). Included from GNUmakefile; also usable on its own:
#   make -f mk/local-mesh.mk local-mesh
#
#   local-mesh-bin   build kube-apiserver, etcd, Istio's webhook and Flux's
#                    controllers (cached) and copy Istio's and Flux's CRDs
#                    next to them; with LOCAL_MESH_BIN set by the caller,
#                    only check that it holds them
#   local-mesh       start the clusters in the background (no-op if running);
#                    kubeconfig: $(LOCAL_MESH_DIR)/kubeconfig, one context per cluster
#   local-mesh-down  stop them, leaving no kube-apiserver or etcd behind

# The repository root, so this fragment works from any directory.
LOCAL_MESH_ROOT     := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
LOCAL_MESH_DIR      ?= .local-mesh
LOCAL_MESH_CLUSTERS ?= east,west,onprem
# Clusters where Flux's controllers run (pull delivery); none by default.
LOCAL_MESH_FLUX     ?=
# Seconds to wait for every cluster to be ready.
LOCAL_MESH_TIMEOUT  ?= 180
LOCAL_MESH_CMD      := $(LOCAL_MESH_DIR)/bin/local-mesh
LOCAL_MESH_LOG      := $(LOCAL_MESH_DIR)/local-mesh.log
LOCAL_MESH_KUBECONFIG := $(abspath $(LOCAL_MESH_DIR))/kubeconfig

# Directory holding kube-apiserver, etcd and istio-crds.yaml. Computed once
# (tools/build-binaries.sh knows the versions) unless set by the caller, and
# exported because tests read $LOCAL_MESH_BIN.
# A sub-make (make test runs several) inherits the top-level make's
# decision through LOCAL_MESH_BIN_GIVEN, so that a directory computed there
# is still built into, not taken for one the caller gave.
ifeq ($(origin LOCAL_MESH_BIN_GIVEN),environment)
else ifeq ($(origin LOCAL_MESH_BIN),undefined)
LOCAL_MESH_BIN := $(shell $(LOCAL_MESH_ROOT)/tools/build-binaries.sh --print-dir 2>/dev/null)
LOCAL_MESH_BIN_GIVEN := 0
else
# Given by the caller: used as it is, never built into (local-mesh-bin
# checks that it holds what the clusters need).
LOCAL_MESH_BIN_GIVEN := 1
endif
export LOCAL_MESH_BIN LOCAL_MESH_BIN_GIVEN

.PHONY: local-mesh-bin local-mesh local-mesh-down local-mesh-status local-mesh-cmd

local-mesh-bin:
ifeq ($(LOCAL_MESH_BIN_GIVEN),1)
	@missing=; for f in kube-apiserver etcd istio-webhook istio-crds.yaml \
		$(if $(strip $(LOCAL_MESH_FLUX)),source-controller kustomize-controller flux-crds.yaml); do \
		[ -e "$(LOCAL_MESH_BIN)/$$f" ] || missing="$$missing $$f"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "LOCAL_MESH_BIN=$(LOCAL_MESH_BIN) lacks:$$missing. Unset LOCAL_MESH_BIN to build them (tools/build-binaries.sh), or point it at a directory that has them." >&2; \
		exit 1; \
	fi; \
	echo "local-mesh: using the binaries in LOCAL_MESH_BIN=$(LOCAL_MESH_BIN) (not rebuilt)"
else
	@$(LOCAL_MESH_ROOT)/tools/build-binaries.sh
endif

local-mesh-cmd:
	@mkdir -p $(dir $(LOCAL_MESH_CMD))
	@go -C $(LOCAL_MESH_ROOT) build -o $(abspath $(LOCAL_MESH_CMD)) ./cmd/local-mesh

# Starts `local-mesh up` with nohup, in a session of its own so that signals
# meant for make's process group do not reach it, unless one is running for
# LOCAL_MESH_DIR, then polls `local-mesh status` (0 ready, 3 starting,
# 1 not running) until the clusters are ready. On failure it shows the log
# and stops whatever was started.
local-mesh: local-mesh-bin local-mesh-cmd
	@if $(LOCAL_MESH_CMD) status --dir $(LOCAL_MESH_DIR) >/dev/null; then \
		$(LOCAL_MESH_CMD) status --dir $(LOCAL_MESH_DIR); exit 0; \
	fi; \
	: > $(LOCAL_MESH_LOG); \
	setsid nohup $(LOCAL_MESH_CMD) up --dir $(LOCAL_MESH_DIR) --bin-dir "$(LOCAL_MESH_BIN)" \
		--clusters $(LOCAL_MESH_CLUSTERS) --flux "$(LOCAL_MESH_FLUX)" >> $(LOCAL_MESH_LOG) 2>&1 < /dev/null & \
	pid=$$!; deadline=$$(( $$(date +%s) + $(LOCAL_MESH_TIMEOUT) )); \
	while :; do \
		$(LOCAL_MESH_CMD) status --dir $(LOCAL_MESH_DIR) >/dev/null; rc=$$?; \
		if [ $$rc = 0 ]; then cat $(LOCAL_MESH_LOG); exit 0; fi; \
		if [ $$rc = 1 ] && ! kill -0 $$pid 2>/dev/null; then why="local-mesh up exited"; break; fi; \
		if [ $$(date +%s) -ge $$deadline ]; then why="not ready after $(LOCAL_MESH_TIMEOUT)s"; break; fi; \
		sleep 0.2; \
	done; \
	echo "local-mesh: $$why; last lines of $(LOCAL_MESH_LOG):" >&2; \
	tail -n 40 $(LOCAL_MESH_LOG) >&2; \
	$(LOCAL_MESH_CMD) down --dir $(LOCAL_MESH_DIR) >&2; \
	exit 1

local-mesh-down: local-mesh-cmd
	@$(LOCAL_MESH_CMD) down --dir $(LOCAL_MESH_DIR)

local-mesh-status: local-mesh-cmd
	@$(LOCAL_MESH_CMD) status --dir $(LOCAL_MESH_DIR)
