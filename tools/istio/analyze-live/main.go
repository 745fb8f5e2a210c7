// Command analyze-live runs Istio's configuration analyzers against running
// clusters, as `istioctl analyze -A --context <name>` does: every analyzer
// istioctl runs (analyzers.AllCombined), reading the clusters' Istio
// configuration and workloads through the API server.
//
//	analyze-live --kubeconfig FILE --contexts east,west,onprem
//
// It prints every message, one per line, prefixed by the context, and exits
// 1 if any is of Error level (2 on a usage or connection problem). The local
// mesh builds it next to its API servers (tools/build-binaries.sh); istioctl
// itself would need kubectl's and Helm's modules on top of istiod's for the
// same analyzers.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"istio.io/istio/pkg/config/analysis/analyzers"
	"istio.io/istio/pkg/config/analysis/diag"
	"istio.io/istio/pkg/config/analysis/local"
	"istio.io/istio/pkg/config/resource"
	"istio.io/istio/pkg/kube"
	"istio.io/istio/pkg/log"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig with one context per cluster")
	contexts := flag.String("contexts", "", "comma-separated contexts to analyze")
	istioNS := flag.String("istio-namespace", "istio-system", "Istio's root namespace")
	flag.Parse()
	// Only the analysis on stdout: istiod's informers log every sync.
	for _, s := range log.Scopes() {
		s.SetOutputLevel(log.ErrorLevel)
	}
	if *kubeconfig == "" || *contexts == "" {
		fmt.Fprintln(os.Stderr, "usage: analyze-live --kubeconfig FILE --contexts a,b,c")
		os.Exit(2)
	}
	errors := 0
	for _, ctx := range strings.Split(*contexts, ",") {
		n, err := analyze(*kubeconfig, ctx, *istioNS)
		if err != nil {
			fmt.Fprintf(os.Stderr, "analyze-live: %s: %v\n", ctx, err)
			os.Exit(2)
		}
		errors += n
	}
	if errors > 0 {
		fmt.Fprintf(os.Stderr, "analyze-live: %d error(s)\n", errors)
		os.Exit(1)
	}
}

// analyze prints the messages for one cluster and returns how many are
// errors.
func analyze(kubeconfig, context, istioNS string) (int, error) {
	client, err := kube.NewCLIClient(kube.BuildClientCmd(kubeconfig, context))
	if err != nil {
		return 0, err
	}
	sa := local.NewIstiodAnalyzer(analyzers.AllCombined(), "", resource.Namespace(istioNS), nil)
	sa.AddRunningKubeSource(kube.EnableCrdWatcher(client))
	cancel := make(chan struct{})
	defer close(cancel)
	res, err := sa.Analyze(cancel)
	if err != nil {
		return 0, err
	}
	errors := 0
	if len(res.Messages) == 0 {
		fmt.Printf("%s: no messages\n", context)
	}
	for _, m := range res.Messages {
		fmt.Printf("%s: %s\n", context, m.String())
		if m.Type.Level() == diag.Error {
			errors++
		}
	}
	return errors, nil
}
