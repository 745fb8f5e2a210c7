package kubeclient

import (
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// IstioGroupVersions are the Istio API groups the provider writes.
var IstioGroupVersions = []string{"networking.istio.io/v1", "security.istio.io/v1"}

// Info is what a cluster tells about itself.
type Info struct {
	KubernetesVersion string
	// IstioKinds lists the Istio kinds served, e.g. "networking.istio.io/v1 Gateway".
	IstioKinds []string
}

// IstioInstalled reports whether every group the provider writes is served.
func (i Info) IstioInstalled() bool {
	groups := map[string]bool{}
	for _, k := range i.IstioKinds {
		for _, gv := range IstioGroupVersions {
			if len(k) > len(gv) && k[:len(gv)] == gv {
				groups[gv] = true
			}
		}
	}
	return len(groups) == len(IstioGroupVersions)
}

// Probe asks a cluster for its version and the Istio kinds it serves.
func Probe(c *Clients) (Info, error) {
	v, err := c.Discovery.ServerVersion()
	if err != nil {
		return Info{}, err
	}
	info := Info{KubernetesVersion: v.GitVersion}
	for _, gv := range IstioGroupVersions {
		list, err := c.Discovery.ServerResourcesForGroupVersion(gv)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return info, fmt.Errorf("listing %s: %w", gv, err)
		}
		for _, r := range list.APIResources {
			if r.Kind != "" && !containsSlash(r.Name) {
				info.IstioKinds = append(info.IstioKinds, gv+" "+r.Kind)
			}
		}
	}
	sort.Strings(info.IstioKinds)
	return info, nil
}

func containsSlash(s string) bool {
	for _, r := range s {
		if r == '/' {
			return true
		}
	}
	return false
}
