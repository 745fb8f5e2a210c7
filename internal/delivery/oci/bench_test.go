package oci

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// intentObjects are the objects of intent i: four per intent, about the
// size of a virtual destination's (ServiceEntry, DestinationRule,
// VirtualService, record).
func intentObjects(i int) []map[string]any {
	var out []map[string]any
	for _, kind := range []string{"ServiceEntry", "DestinationRule", "VirtualService", "Gateway"} {
		out = append(out, object(kind, "users", fmt.Sprintf("intent-%03d", i), map[string]any{
			"hosts": []any{fmt.Sprintf("svc-%03d.global", i)}, "location": "MESH_INTERNAL", "resolution": "STATIC",
			"ports":     []any{map[string]any{"number": 8080, "name": "http", "protocol": "HTTP"}},
			"endpoints": []any{map[string]any{"address": "203.0.113.10", "ports": map[string]any{"http": 15443}, "locality": "us-east-1/us-east-1a"}},
		}))
	}
	return out
}

const benchIntents = 500

// BenchmarkPublish500Intents: 500 intents applied in parallel each add
// their objects to one cluster's artifact through its Writer (what an
// apply of 500 resources does), on the in-memory registry.
func BenchmarkPublish500Intents(b *testing.B) {
	ctx := context.Background()
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		reg := newRegistry(b)
		var ws Writers
		w := ws.For(reg.target(fmt.Sprintf("run-%d", n)), "state-a")
		b.StartTimer()
		var wg sync.WaitGroup
		for i := range benchIntents {
			wg.Add(1)
			go func() {
				defer wg.Done()
				objs := intentObjects(i)
				if _, err := w.Update(ctx, func(set Objects) error {
					for _, m := range objs {
						k, err := Key(m)
						if err != nil {
							return err
						}
						set[k] = m
					}
					return nil
				}); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		b.ReportMetric(float64(reg.pushes.Load()), "pushes/op")
	}
}

// BenchmarkPublishFloor is the floor: the same 2,000 objects rendered and
// pushed once with go-containerregistry alone.
func BenchmarkPublishFloor(b *testing.B) {
	all := Objects{}
	for i := range benchIntents {
		for _, m := range intentObjects(i) {
			k, err := Key(m)
			if err != nil {
				b.Fatal(err)
			}
			all[k] = m
		}
	}
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		reg := newRegistry(b)
		ref, err := name.NewTag(reg.target(fmt.Sprintf("run-%d", n)).String(), name.Insecure)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		img, err := Image(all, "state-a")
		if err != nil {
			b.Fatal(err)
		}
		if err := remote.Write(ref, img); err != nil {
			b.Fatal(err)
		}
	}
}
