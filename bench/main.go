// Command bench measures the provider against the raw server-side-apply
// floor: make bench (mk/bench.mk); docs/performance.md explains the
// numbers.
//
// It starts a local mesh of its own, and for each M in -intents and each
// run, on empty clusters each time:
//
//  1. floor (bench/floor) replays, with plain server-side apply, the
//     requests the provider's engine sends for the planned objects of a
//     generated configuration of M intents (bench/gen, rendered once per
//     M), lists them back, records a fingerprint of every object and
//     deletes them;
//  2. engine (bench/engine) applies, reads and deletes the same intents
//     through the provider's engine, without Terraform;
//  3. Terraform, with the provider behind a dev_overrides CLI config:
//     plan -out, apply of that plan, a no-op plan (refresh included; it
//     must report no changes), a plan with -refresh=false, and destroy.
//     After apply, state must list exactly the objects and digests of the
//     inventory gen.Render returned, and the objects in the clusters must be the floor's
//     (labels, annotations, spec, data; instance IDs aside);
//  4. terraform-core: Terraform alone on the same number of resources and
//     about the same state bytes (terraform_data), for Terraform's share.
//
// The provider runs under bench/launcher, which records its peak RSS and
// CPU time. Per step the driver also records the CPU time of Terraform and
// of the clusters' API servers and etcds, and the API requests they served.
// It prints the tables of medians and writes them, with every run's raw
// numbers, to -work (results.md, results.json).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mesh-intent/terraform-provider-mesh/bench/gen"
	"github.com/mesh-intent/terraform-provider-mesh/internal/localmesh"
)

type options struct {
	intents     []int
	runs        []int
	clusters    []string
	parallelism int
	concurrency int
	work        string
	binDir      string
	launcherDir string
	provider    string
	floor       string
	engine      string
	budget      time.Duration
	tfCore      bool
	kubeconfig  string // use running clusters instead of starting a mesh
}

func main() {
	var o options
	intents := flag.String("intents", "10,100,500", "comma-separated M values")
	runs := flag.String("runs", "5,3,3", "runs per M, in the order of -intents (the last repeats)")
	clusters := flag.String("clusters", "east,west,onprem", "clusters of the local mesh")
	flag.IntVar(&o.parallelism, "parallelism", 10, "terraform -parallelism, and intents the engine step handles at once")
	flag.IntVar(&o.concurrency, "concurrency", 0, "floor requests in flight per cluster (default: -parallelism)")
	flag.StringVar(&o.work, "work", ".bench", "working directory (mesh data, configurations, states, results)")
	flag.StringVar(&o.binDir, "bin-dir", os.Getenv(localmesh.EnvBinDir), "local mesh binaries (tools/build-binaries.sh)")
	flag.StringVar(&o.launcherDir, "launcher-dir", "", "directory holding bench/launcher as terraform-provider-mesh (dev_overrides)")
	flag.StringVar(&o.provider, "provider", "", "the provider binary the launcher starts")
	flag.StringVar(&o.floor, "floor", "", "the bench/floor binary")
	flag.StringVar(&o.engine, "engine", "", "the bench/engine binary")
	flag.DurationVar(&o.budget, "budget", 25*time.Minute, "start no further run of an M (the first always runs) after this much time")
	flag.BoolVar(&o.tfCore, "terraform-core", true, "measure the terraform-core reference (terraform_data with the same state)")
	// controller-runtime registers -kubeconfig.
	flag.StringVar(&o.kubeconfig, "use-kubeconfig", "", "use the clusters of this kubeconfig (contexts named like -clusters) instead of starting a local mesh")
	flag.Parse()
	o.intents = ints(*intents)
	o.runs = ints(*runs)
	o.clusters = strings.Split(*clusters, ",")
	if o.concurrency == 0 {
		o.concurrency = o.parallelism
	}
	for _, p := range []*string{&o.work, &o.launcherDir, &o.provider, &o.floor, &o.engine} {
		if *p == "" {
			fatal(fmt.Errorf("-work, -launcher-dir, -provider, -floor and -engine are required"))
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			fatal(err)
		}
		*p = abs
	}
	if err := run(o); err != nil {
		fatal(err)
	}
}

func run(o options) error {
	began := time.Now()
	ctrllog.SetLogger(logr.Discard()) // envtest logs through controller-runtime
	if err := os.MkdirAll(o.work, 0o755); err != nil {
		return err
	}
	b := &bench{o: o, kubeconfig: o.kubeconfig, admin: map[string]*rest.Config{}}
	if b.kubeconfig == "" {
		fmt.Fprintf(os.Stderr, "bench: starting a local mesh of %d clusters %v\n", len(o.clusters), o.clusters)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		b.meshDir = filepath.Join(o.work, "mesh")
		mesh, err := localmesh.Start(ctx, localmesh.Options{Clusters: o.clusters, Dir: b.meshDir, BinDir: o.binDir})
		cancel()
		if err != nil {
			return fmt.Errorf("starting the local mesh: %w", err)
		}
		stop := func() {
			if err := mesh.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "bench: stopping the local mesh:", err)
			}
		}
		defer stop()
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
		go func() { <-sigs; stop(); os.Exit(130) }()
		b.kubeconfig = mesh.Kubeconfig()
	} else {
		b.meshDir = filepath.Dir(b.kubeconfig)
	}
	for _, c := range o.clusters {
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: b.kubeconfig},
			&clientcmd.ConfigOverrides{CurrentContext: c}).ClientConfig()
		if err != nil {
			return err
		}
		b.admin[c] = cfg
		d, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return err
		}
		if err := ensureNamespaces(d, gen.Generate(0, gen.Clusters(o.clusters)).Namespaces); err != nil {
			return fmt.Errorf("cluster %s: %w", c, err)
		}
	}
	if err := b.writeCLIConfig(); err != nil {
		return err
	}
	// Warm up the API servers (each kind's first server-side apply builds
	// its field-management type information) before anything is timed.
	if _, err := b.render(o.intents[0]); err != nil {
		return err
	}
	if _, err := b.floorRun(o.intents[0], "apply,delete", ""); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench: clusters ready after %s\n", time.Since(began).Round(time.Second))
	var rows []row
	for i, m := range o.intents {
		n := o.runs[len(o.runs)-1]
		if i < len(o.runs) {
			n = o.runs[i]
		}
		var results []runResult
		for r := 0; r < n; r++ {
			if r > 0 && time.Since(began) > o.budget {
				fmt.Fprintf(os.Stderr, "bench: M=%d: time budget of %s used, stopping after %d run(s)\n", m, o.budget, r)
				break
			}
			res, err := b.runOnce(m, r)
			if err != nil {
				//lint:ignore ST1005 M is the variable of the bench (M intents), named as in its output
				return fmt.Errorf("M=%d run %d: %w", m, r+1, err)
			}
			results = append(results, res)
			fmt.Fprintf(os.Stderr, "bench: M=%d run %d (%s elapsed): %s\n", m, r+1, time.Since(began).Round(time.Second), res.summary())
		}
		rows = append(rows, summarize(m, results))
	}
	report := renderReport(o, rows, time.Since(began))
	fmt.Print(report)
	raw, _ := json.MarshalIndent(rows, "", "  ")
	if err := os.WriteFile(filepath.Join(o.work, "results.json"), raw, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.work, "results.md"), []byte(report), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench: done in %s; results in %s\n", time.Since(began).Round(time.Second), filepath.Join(o.work, "results.md"))
	return nil
}

// ensureNamespaces creates the backend namespaces of the generated
// configurations (the local clusters have only istio-system).
func ensureNamespaces(d dynamic.Interface, names []string) error {
	for _, n := range append(names, "batch") {
		ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": n}}}
		_, err := d.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(context.Background(), ns, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

type bench struct {
	o          options
	kubeconfig string
	meshDir    string // where the API servers' and etcds' data live
	admin      map[string]*rest.Config
	// renders holds gen.Render's result per M (render).
	renders map[int]*gen.Rendered
}

// render returns what the floor writes for M and what state must hold,
// rendered once per M and saved where the floor reads it (renderedFile).
func (b *bench) render(m int) (*gen.Rendered, error) {
	if r, ok := b.renders[m]; ok {
		return r, nil
	}
	r, err := gen.Generate(m, gen.Clusters(b.o.clusters)).Render()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(b.renderedFile(m)), 0o755); err != nil {
		return nil, err
	}
	if err := r.Save(b.renderedFile(m)); err != nil {
		return nil, err
	}
	if b.renders == nil {
		b.renders = map[int]*gen.Rendered{}
	}
	b.renders[m] = r
	return r, nil
}

func (b *bench) cliConfig() string { return filepath.Join(b.o.work, "terraformrc") }

// writeCLIConfig points Terraform at the launcher instead of a registry.
func (b *bench) writeCLIConfig() error {
	rc := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"registry.terraform.io/mesh-intent/mesh\" = %q\n  }\n  direct {}\n}\n", b.o.launcherDir)
	return os.WriteFile(b.cliConfig(), []byte(rc), 0o644)
}

func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			fatal(fmt.Errorf("bad number %q", f))
		}
		out = append(out, n)
	}
	return out
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}
