# Imported by the identity the roster claims (its id). The import reads
# the claim from the clusters: its token, and the policy instances it
# lists, whose names become traffic_policies.
terraform import mesh_workspace.this payments
