package translate_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/mesh-intent/terraform-provider-mesh/bench/gen"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/accesspolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/cluster"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// The translator's cost at scale: 500 intents (bench/gen's mix of
// mesh_cluster, mesh_virtual_destination, mesh_access_policy and
// mesh_traffic_policy) over a registry of 50 clusters. Translation needs no
// cluster. make bench-translate runs these; docs/performance.md has the
// numbers.
//
// Besides ns/op (wall time of one whole 500-intent translation) each
// reports cpu-ms/op, the process's CPU time per translation (getrusage:
// every thread, the garbage collector's included), and objects/op.

const (
	benchIntents  = 500
	benchClusters = 50
)

func benchSpec(b *testing.B) (*gen.Spec, *translate.Registry) {
	b.Helper()
	names := make([]string, benchClusters)
	for i := range names {
		names[i] = fmt.Sprintf("c%02d", i)
	}
	spec := gen.Generate(benchIntents, gen.Clusters(names))
	if spec.Intents() != benchIntents {
		b.Fatalf("generated %d intents", spec.Intents())
	}
	return spec, spec.Registry()
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs fn b.N times and reports CPU time and objects per run.
func measure(b *testing.B, fn func() int) {
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	objects := 0
	for i := 0; i < b.N; i++ {
		objects = fn()
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e6, "cpu-ms/op")
	b.ReportMetric(float64(objects), "objects/op")
}

// BenchmarkTranslate500Intents50Clusters is the translator alone: every
// intent's Translate* call, each policy's destination resolved from its
// virtual destination as the provider does.
func BenchmarkTranslate500Intents50Clusters(b *testing.B) {
	spec, reg := benchSpec(b)
	measure(b, func() int {
		n := 0
		for _, c := range spec.Mesh {
			objs, err := cluster.Translate(c, reg)
			if err != nil {
				b.Fatal(err)
			}
			n += len(objs)
		}
		for _, vd := range spec.Destinations {
			objs, err := virtualdestination.Translate(vd, reg)
			if err != nil {
				b.Fatal(err)
			}
			n += len(objs)
		}
		for _, ap := range spec.Access {
			vd := spec.Destination(ap.Destination)
			dest := accesspolicy.Destination{VirtualDestination: vd.Hostname}
			for _, be := range vd.Backends {
				dest.Backends = append(dest.Backends, accesspolicy.Backend{Cluster: be.Cluster, Namespace: be.Namespace, Service: be.Service})
			}
			objs, err := accesspolicy.Translate(ap.Intent, dest, reg)
			if err != nil {
				b.Fatal(err)
			}
			n += len(objs)
		}
		for _, tp := range spec.Traffic {
			dest := trafficpolicy.DestinationOf(spec.Destination(tp.Destination), reg)
			objs, err := trafficpolicy.Translate(tp.Intent, dest, reg)
			if err != nil {
				b.Fatal(err)
			}
			n += len(objs)
		}
		return n
	})
}

// BenchmarkPlan500Intents50Clusters is what planning costs the provider
// per configuration without Terraform: translation (records of virtual
// destinations included) plus engine.Plan, which renders every object as
// the manifest server-side apply sends and digests it.
func BenchmarkPlan500Intents50Clusters(b *testing.B) {
	spec, reg := benchSpec(b)
	measure(b, func() int {
		translated, err := spec.Translate(reg)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, t := range translated {
			desired, err := engine.Plan(t.Owner, t.Objects)
			if err != nil {
				b.Fatal(err)
			}
			n += len(desired)
		}
		return n
	})
}
