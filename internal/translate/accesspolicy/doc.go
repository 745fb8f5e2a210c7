// Package accesspolicy translates a mesh_access_policy intent into ALLOW
// AuthorizationPolicies in the destination's clusters: source identities
// (SPIFFE principals in each source cluster's trust domain), with the
// methods, paths and ports they may call.
package accesspolicy
