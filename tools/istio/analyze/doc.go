// Package analyze runs Istio's configuration analyzers (what `istioctl
// analyze -A` runs: analyzers.AllCombined through local.IstiodAnalyzer, with
// Istio's default resources, on files) over every translator golden case,
// cluster by cluster, together with the workloads a real cluster would have:
// injected namespaces, the backend Services and their sidecar-injected pods,
// client pods, and the Istio gateways. No message of Error level may come
// out; every message is recorded in <case>.analyze.txt next to the golden
// file, so a new warning shows in review.
package analyze
