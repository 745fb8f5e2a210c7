package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

const clustersDataSourceHCL = `
data "mesh_clusters" "all" {}
`

// checkAllReachable asserts that every local cluster was read: reachable,
// a Kubernetes version, Istio's VirtualService kind, no error.
func checkAllReachable() []statecheck.StateCheck {
	var checks []statecheck.StateCheck
	for i, name := range []string{"east", "onprem", "west"} { // sorted by name
		at := tfjsonpath.New("clusters").AtSliceIndex(i)
		checks = append(checks,
			statecheck.ExpectKnownValue("data.mesh_clusters.all", at.AtMapKey("name"), knownvalue.StringExact(name)),
			statecheck.ExpectKnownValue("data.mesh_clusters.all", at.AtMapKey("reachable"), knownvalue.Bool(true)),
			statecheck.ExpectKnownValue("data.mesh_clusters.all", at.AtMapKey("error"), knownvalue.StringExact("")),
			statecheck.ExpectKnownValue("data.mesh_clusters.all", at.AtMapKey("kubernetes_version"), knownvalue.StringRegexp(regexp.MustCompile(`^v1\.\d+\.\d+`))),
		)
	}
	checks = append(checks, statecheck.ExpectKnownValue("data.mesh_clusters.all", tfjsonpath.New("clusters"), knownvalue.ListSizeExact(3)))
	return checks
}

// checkIstioKinds asserts the Istio kinds the provider writes are reported.
func checkIstioKinds() resource.TestCheckFunc {
	var fs []resource.TestCheckFunc
	for i := 0; i < 3; i++ {
		for _, kind := range []string{"networking.istio.io/v1 VirtualService", "networking.istio.io/v1 Gateway", "security.istio.io/v1 AuthorizationPolicy"} {
			fs = append(fs, resource.TestCheckTypeSetElemAttr("data.mesh_clusters.all", fmt.Sprintf("clusters.%d.istio_crds.*", i), kind))
		}
	}
	return resource.ComposeAggregateTestCheckFunc(fs...)
}

func TestAccClustersDataSource_kubeconfigContexts(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:            providerConfig(t, "") + clustersDataSourceHCL,
			ConfigStateChecks: checkAllReachable(),
			Check:             checkIstioKinds(),
		}},
	})
}

func TestAccClustersDataSource_inlineHostTokenCA(t *testing.T) {
	requireMesh(t)
	tokens := map[string]string{}
	for _, c := range testClusters {
		tok, err := testMesh.ServiceAccountToken(context.Background(), c, "kube-system", "mesh-inline", "cluster-admin")
		if err != nil {
			t.Fatalf("token for %s: %v", c, err)
		}
		tokens[c] = tok
	}
	inline := func(t *testing.T, c string) string {
		cfg := testMesh.RESTConfig(c)
		return fmt.Sprintf("host = %q\n      token = %q\n      cluster_ca_certificate = %q", cfg.Host, tokens[c], string(cfg.CAData))
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:            providerConfigWith(t, "", inline) + clustersDataSourceHCL,
			ConfigStateChecks: checkAllReachable(),
			Check:             checkIstioKinds(),
		}},
	})
}

func TestAccClustersDataSource_execPlugin(t *testing.T) {
	requireMesh(t)
	dir := t.TempDir()
	plugin := filepath.Join(dir, "mesh-credential")
	// The plugin prints an ExecCredential with the token it is given in its
	// environment, as cloud plugins (aws eks get-token) print theirs.
	script := "#!/bin/sh\nprintf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"%s\"}}' \"$MESH_TOKEN\"\n"
	if err := os.WriteFile(plugin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	withExec := func(t *testing.T, c string) string {
		tok, err := testMesh.ServiceAccountToken(context.Background(), c, "kube-system", "mesh-exec", "cluster-admin")
		if err != nil {
			t.Fatalf("token for %s: %v", c, err)
		}
		cfg := testMesh.RESTConfig(c)
		return fmt.Sprintf(`host = %q
      cluster_ca_certificate = %q
      exec = {
        api_version = "client.authentication.k8s.io/v1"
        command     = %q
        env         = { MESH_TOKEN = %q }
      }`, cfg.Host, string(cfg.CAData), plugin, tok)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:            providerConfigWith(t, "", withExec) + clustersDataSourceHCL,
			ConfigStateChecks: checkAllReachable(),
			Check:             checkIstioKinds(),
		}},
	})
}

// One cluster down never fails the read: it is reported unreachable with
// its error, and the others are read as usual.
func TestAccClustersDataSource_clusterDown(t *testing.T) {
	requireMesh(t)
	if err := testMesh.StopCluster("onprem"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := testMesh.StartCluster("onprem"); err != nil {
			t.Errorf("restarting onprem: %v", err)
		}
	})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig(t, `request_timeout = "5s"`) + clustersDataSourceHCL,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.mesh_clusters.all", tfjsonpath.New("clusters").AtSliceIndex(0).AtMapKey("reachable"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue("data.mesh_clusters.all", tfjsonpath.New("clusters").AtSliceIndex(1).AtMapKey("name"), knownvalue.StringExact("onprem")),
				statecheck.ExpectKnownValue("data.mesh_clusters.all", tfjsonpath.New("clusters").AtSliceIndex(1).AtMapKey("reachable"), knownvalue.Bool(false)),
				statecheck.ExpectKnownValue("data.mesh_clusters.all", tfjsonpath.New("clusters").AtSliceIndex(1).AtMapKey("error"), knownvalue.StringRegexp(regexp.MustCompile(`connect|refused|dial`))),
				statecheck.ExpectKnownValue("data.mesh_clusters.all", tfjsonpath.New("clusters").AtSliceIndex(2).AtMapKey("reachable"), knownvalue.Bool(true)),
			},
		}},
	})
}
