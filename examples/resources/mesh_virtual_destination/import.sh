# Imported by name (the name attribute). The configuration is read back
# from what the intent keeps in the clusters, from whichever state wrote
# it; every registered cluster must answer. Objects this provider did not
# write are refused unless the id is adopt:<name> (see adopt_existing).
terraform import mesh_virtual_destination.user user
