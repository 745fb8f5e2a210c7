package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"testing"
)

// A layer larger than maxContent once uncompressed is an error, never a
// truncation: cut on a tar header boundary, the objects after the cut
// would be dropped without a word, and the Writer would then publish the
// truncated set (found by review: io.LimitReader ends such a stream with
// a clean EOF). A layer of about 260 KB compressed is enough.
func TestOversizedLayerIsAnErrorNotATruncation(t *testing.T) {
	obj := func(name string) []byte {
		return []byte("apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata:\n  name: " + name + "\n  namespace: istio-system\n")
	}
	a, b := obj("a"), obj("b")
	pad := func(n int) int { return (n + 511) / 512 * 512 }
	// a.yaml, then a filler (not YAML: skipped) ending exactly at
	// maxContent, then b.yaml.
	filler := maxContent - (512 + pad(len(a))) - 512
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
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
	objs, _, err := parseContent(&buf)
	if !errors.Is(err, errTooLarge) {
		t.Errorf("a layer over maxContent read as %d object(s), error %v; want errTooLarge (b.yaml must not be dropped silently)", len(objs), err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
