# make render [RENDER_CONFIG=dir] [RENDER_ARGS='-var ...']
#
# Prints, per cluster, the Istio objects a configuration produces, as YAML,
# without contacting any cluster: terraform plan -refresh=false against an
# empty state, with MESH_RENDER_DIR set so that the provider writes what it
# planned. The objects attribute of a plan names each object and its
# digest; this shows the content. Default: the demo configuration.

RENDER_ROOT   := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
RENDER_CONFIG ?= examples/demo
RENDER_ARGS   ?= -var kubeconfig=/nonexistent/kubeconfig
RENDER_DIR    ?= $(RENDER_ROOT)/.render

.PHONY: render

render: check-terraform
	@rm -rf $(RENDER_DIR) && mkdir -p $(RENDER_DIR)/bin $(RENDER_DIR)/out
	@$(GO) -C $(RENDER_ROOT) build -o $(RENDER_DIR)/bin/terraform-provider-mesh .
	@printf '%s\n' 'provider_installation {' '  dev_overrides {' \
	  '    "registry.terraform.io/mesh-intent/mesh" = "$(RENDER_DIR)/bin"' '  }' '  direct {}' '}' > $(RENDER_DIR)/terraformrc
	@MESH_RENDER_DIR=$(RENDER_DIR)/out TF_CLI_CONFIG_FILE=$(RENDER_DIR)/terraformrc TF_DATA_DIR=$(RENDER_DIR)/.terraform \
	  CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1 \
	  terraform -chdir=$(abspath $(RENDER_CONFIG)) plan -refresh=false -lock=false -input=false -compact-warnings \
	  -state=$(RENDER_DIR)/empty.tfstate $(RENDER_ARGS) > $(RENDER_DIR)/plan.txt 2>&1 || { cat $(RENDER_DIR)/plan.txt; exit 1; }
	@for c in $$(ls $(RENDER_DIR)/out); do \
	  echo "# ==== cluster $$c"; \
	  for f in $(RENDER_DIR)/out/$$c/*.yaml; do echo "---"; cat $$f; done; \
	done
