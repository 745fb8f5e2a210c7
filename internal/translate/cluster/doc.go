// Package cluster translates a mesh_cluster intent: the east-west Gateway
// of a multi-network cluster, the mesh-wide PeerAuthentication (mTLS mode)
// and the default-deny AuthorizationPolicy with its exemptions.
package cluster
