package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"testing"
)

// R12. parseContent bounds the layer with io.LimitReader(maxContent),
// which ends the stream with io.EOF, not an error. When the limit falls
// on a tar header boundary, tar.Reader.Next reports a clean end of the
// archive: every object after it is silently dropped, the artifact reads
// as valid, and the Writer then publishes that truncated set (removing
// every other intent's objects beyond the cut). A ~260 KB layer is
// enough. An over-limit layer should be an error.
func TestReviewOversizedLayerIsAnErrorNotATruncation(t *testing.T) {
	obj := func(name string) []byte {
		return []byte("apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata:\n  name: " + name + "\n  namespace: istio-system\n")
	}
	a, b := obj("a"), obj("b")
	pad := func(n int) int { return (n + 511) / 512 * 512 }
	// a.yaml, then a filler (not YAML: skipped) ending exactly at
	// maxContent, then b.yaml.
	filler := maxContent - (512 + pad(len(a))) - 512
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	write := func(name string, size int, r io.Reader) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(size), Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(tw, r); err != nil {
			t.Fatal(err)
		}
	}
	write("a.yaml", len(a), bytes.NewReader(a))
	write("filler.bin", filler, io.LimitReader(zeros{}, int64(filler)))
	write("b.yaml", len(b), bytes.NewReader(b))
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("compressed layer: %d bytes", buf.Len())
	objs, err := parseContent(&buf)
	if err == nil {
		t.Errorf("a layer over maxContent read without error as %d object(s) (b.yaml dropped silently)", len(objs))
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
