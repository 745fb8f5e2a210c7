# The first five minutes: apply examples/demo to the local mesh and show what
# it produced in each cluster. Included from GNUmakefile, next to
# mk/local-mesh.mk, whose targets and variables it uses.
#
#   demo       build the provider, start the local mesh, create the demo's
#              namespaces, terraform apply examples/demo, print the Istio
#              objects per cluster. Run it again: Terraform reports no changes.
#   demo-down  terraform destroy (if the mesh is running), stop the mesh,
#              forget the demo's state
#
# Nothing is fetched from the network but Go modules: Terraform runs the
# provider built here through a dev_overrides CLI config, without
# `terraform init`. The state, the CLI config and Terraform's data directory
# live under $(LOCAL_MESH_DIR)/demo, so examples/demo stays clean.

GO      ?= go
KUBECTL ?= kubectl

# The repository root, from this file's location. The other paths derive
# from mk/local-mesh.mk's variables when used, so the include order does not
# matter.
DEMO_ROOT       := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
DEMO_CONFIG     := $(DEMO_ROOT)/examples/demo
DEMO_MESH_DIR    = $(abspath $(or $(strip $(LOCAL_MESH_DIR)),$(error LOCAL_MESH_DIR is empty)))
DEMO_BIN         = $(DEMO_MESH_DIR)/bin
DEMO_STATE_DIR   = $(DEMO_MESH_DIR)/demo
DEMO_STATE       = $(DEMO_STATE_DIR)/terraform.tfstate
DEMO_TFRC        = $(DEMO_STATE_DIR)/terraformrc
DEMO_OBJECTS     = $(DEMO_BIN)/mesh-objects
# Namespaces of the demo's backends (examples/demo/main.tf), created in every
# cluster: the objects written next to the backend services go there.
DEMO_NAMESPACES ?= users ledger

demo_comma := ,
DEMO_CLUSTERS = $(subst $(demo_comma), ,$(LOCAL_MESH_CLUSTERS))

# Terraform with the demo's CLI config; no init, no checkpoint calls.
DEMO_TF = TF_CLI_CONFIG_FILE=$(DEMO_TFRC) TF_DATA_DIR=$(DEMO_STATE_DIR)/.terraform \
	TF_PLUGIN_CACHE_DIR= CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1 \
	terraform -chdir=$(DEMO_CONFIG)
# -state keeps the state out of examples/demo without a backend block (which
# would need terraform init); Terraform calls the flag deprecated, hence
# -compact-warnings, which also shortens the dev_overrides notice.
DEMO_TF_ARGS = -input=false -compact-warnings -state=$(DEMO_STATE) -var kubeconfig=$(LOCAL_MESH_KUBECONFIG)

.PHONY: demo demo-down demo-tools demo-build demo-tfrc

demo-tools:
	@command -v terraform >/dev/null 2>&1 || { \
	  echo "make demo needs the Terraform CLI (>= 1.5) on PATH and did not find it."; \
	  echo "Install it (https://developer.hashicorp.com/terraform/install, or your package manager) and run make demo again."; \
	  exit 1; } >&2
	@command -v $(KUBECTL) >/dev/null 2>&1 || { \
	  echo "make demo needs kubectl on PATH (or KUBECTL=/path/to/kubectl) to create the demo's namespaces."; exit 1; } >&2

# The provider, where the CLI config's dev_overrides points, and the table
# printer. Go's build cache makes a second run cheap.
DEMO_BUILD_PROVIDER = $(GO) -C $(DEMO_ROOT) build -o $(DEMO_BIN)/terraform-provider-mesh .
DEMO_WRITE_TFRC = mkdir -p $(DEMO_STATE_DIR) && printf '%s\n' \
	'\# Written by make demo: Terraform uses the provider built in $(DEMO_BIN).' \
	'provider_installation {' \
	'  dev_overrides {' \
	'    "registry.terraform.io/mesh-intent/mesh" = "$(DEMO_BIN)"' \
	'  }' \
	'  direct {}' \
	'}' > $(DEMO_TFRC)

demo-build:
	@mkdir -p $(DEMO_BIN)
	@echo "==> building terraform-provider-mesh and mesh-objects into $(DEMO_BIN)"
	@$(DEMO_BUILD_PROVIDER)
	@$(GO) -C $(DEMO_ROOT) build -o $(DEMO_OBJECTS) ./cmd/mesh-objects

demo-tfrc:
	@$(DEMO_WRITE_TFRC)

demo: demo-tools demo-build local-mesh demo-tfrc
	@echo "==> namespaces $(DEMO_NAMESPACES) in $(DEMO_CLUSTERS)"
	@for c in $(DEMO_CLUSTERS); do \
	  for ns in $(DEMO_NAMESPACES); do \
	    printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n---\n' $$ns; \
	  done | $(KUBECTL) --kubeconfig $(LOCAL_MESH_KUBECONFIG) --context $$c apply -o name -f - >/dev/null || exit 1; \
	done
	@echo "==> workloads of examples/demo/workloads.yaml in $(DEMO_CLUSTERS)"
	@for c in $(DEMO_CLUSTERS); do \
	  $(KUBECTL) --kubeconfig $(LOCAL_MESH_KUBECONFIG) --context $$c apply -o name -f $(DEMO_CONFIG)/workloads.yaml >/dev/null || exit 1; \
	done
	@echo "==> terraform apply examples/demo (state: $(DEMO_STATE))"
	@$(DEMO_TF) apply -auto-approve $(DEMO_TF_ARGS)
	@echo
	@echo "==> Istio objects owned by terraform-provider-mesh, per cluster"
	@$(DEMO_OBJECTS) --kubeconfig $(LOCAL_MESH_KUBECONFIG) --contexts $(LOCAL_MESH_CLUSTERS)
	@echo
	@echo "==> Istio's analyzers (istioctl analyze -A) on every cluster"
	@$(LOCAL_MESH_BIN)/analyze-live --kubeconfig $(LOCAL_MESH_KUBECONFIG) --contexts $(LOCAL_MESH_CLUSTERS)
	@echo
	@echo "Look around:  kubectl --kubeconfig $(LOCAL_MESH_KUBECONFIG) --context east get serviceentries -A"
	@echo "Change examples/demo/*.tf and run make demo again; make demo-down stops everything."

# Destroys only when there is something to destroy on a running mesh. A
# failed destroy still stops the mesh (whose clusters start empty next time)
# and forgets the state, then fails.
demo-down: local-mesh-cmd
	@fail=; \
	if [ -f $(DEMO_STATE) ] && $(LOCAL_MESH_CMD) status --dir $(LOCAL_MESH_DIR) >/dev/null; then \
	  echo "==> terraform destroy examples/demo"; \
	  { command -v terraform >/dev/null || { echo "terraform is not on PATH" >&2; false; }; } && \
	  $(DEMO_BUILD_PROVIDER) && { $(DEMO_WRITE_TFRC); } && \
	  $(DEMO_TF) destroy -auto-approve $(DEMO_TF_ARGS) || fail="terraform destroy failed"; \
	fi; \
	$(LOCAL_MESH_CMD) down --dir $(LOCAL_MESH_DIR) || fail="$${fail:+$$fail; }local-mesh down failed"; \
	rm -rf $(DEMO_STATE_DIR); \
	if [ -n "$$fail" ]; then echo "demo-down: $$fail (demo state removed anyway)" >&2; exit 1; fi
