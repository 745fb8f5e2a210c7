# Imported by the provider's workspace identity. The roster then lists
# every traffic policy that contributes with that identity in the
# registered clusters; write the configuration from it (or use
# -generate-config-out) and take out what no longer belongs to the state.
terraform import mesh_workspace.this payments
