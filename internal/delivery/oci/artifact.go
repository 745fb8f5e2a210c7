package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/yaml"
)

// Flux's media types (the ones `flux push artifact` writes): the manifest
// is an OCI image manifest whose config and single layer carry these.
const (
	ConfigMediaType  = "application/vnd.cncf.flux.config.v1+json"
	ContentMediaType = "application/vnd.cncf.flux.content.v1.tar+gzip"
)

// The manifest's annotations. Source and revision are the ones Flux shows
// (its OCIRepository status carries them); created is fixed (see
// createdValue); Publisher names the state that publishes the artifact, so
// that a second state claiming the same artifact is told apart.
const (
	AnnotationSource    = "org.opencontainers.image.source"
	AnnotationRevision  = "org.opencontainers.image.revision"
	AnnotationCreated   = "org.opencontainers.image.created"
	AnnotationPublisher = "mesh-intent.io/publisher"
	// AnnotationFormat versions this layout (one YAML file per object).
	AnnotationFormat = "mesh-intent.io/artifact-format"
	// FormatVersion is the only layout this build writes and reads.
	FormatVersion = "1"
	// SourceValue is the source annotation of every artifact we publish.
	SourceValue = "terraform-provider-mesh"
)

// createdValue is the created annotation. Flux's CLI writes the push
// time; a time would make every push of the same objects a new digest, so
// the artifact would change at every apply. The epoch keeps the bytes a
// function of the objects.
const createdValue = "1970-01-01T00:00:00Z"

// Objects are the manifests an artifact holds, keyed by Key.
type Objects map[string]map[string]any

// Key is the identity of a manifest in an artifact, and its file name
// without the extension: <group>/<Kind>/<namespace>/<name> (core group
// "core", cluster-scoped namespace "_").
func Key(manifest map[string]any) (string, error) {
	apiVersion, _ := manifest["apiVersion"].(string)
	kind, _ := manifest["kind"].(string)
	meta, _ := manifest["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	namespace, _ := meta["namespace"].(string)
	if apiVersion == "" || kind == "" || name == "" {
		return "", fmt.Errorf("a manifest needs apiVersion, kind and metadata.name (got %q, %q, %q)", apiVersion, kind, name)
	}
	group := "core"
	if i := strings.Index(apiVersion, "/"); i >= 0 {
		group = apiVersion[:i]
	}
	if namespace == "" {
		namespace = "_"
	}
	for _, part := range []string{group, kind, namespace, name} {
		if strings.ContainsAny(part, "/\\") || part == "." || part == ".." {
			return "", fmt.Errorf("manifest %s %s/%s: %q cannot be part of a file name", kind, namespace, name, part)
		}
	}
	return path.Join(group, kind, namespace, name), nil
}

// Clone copies the set (not the manifests, which are never modified).
func (o Objects) Clone() Objects {
	out := make(Objects, len(o))
	for k, v := range o {
		out[k] = v
	}
	return out
}

// content is the layer's bytes: a gzipped tar of one YAML file per
// object, in the order of their names, every header fixed (mode, times,
// owner), gzip without a name or time. The same objects give the same
// bytes. cache, when not nil, keeps each object's YAML from the previous
// call.
func content(objs Objects, cache *yamlCache) ([]byte, error) {
	keys := make([]string, 0, len(objs))
	for k := range objs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	cache.begin()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	epoch := time.Unix(0, 0).UTC()
	for _, k := range keys {
		raw, err := cache.render(k, objs[k])
		if err != nil {
			return nil, fmt.Errorf("rendering %s: %w", k, err)
		}
		hdr := &tar.Header{
			Name: k + ".yaml", Mode: 0o644, Size: int64(len(raw)), Typeflag: tar.TypeReg,
			ModTime: epoch, Format: tar.FormatPAX,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(raw); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	cache.end()
	return buf.Bytes(), nil
}

// yamlCache keeps the YAML of each object of the artifact a Writer last
// built, by the object's JSON: sigs.k8s.io/yaml's Marshal is JSON
// converted to YAML, and the conversion (a YAML parse and print) was
// most of a push's work, done again for every object at every push of a
// growing artifact. Its bytes are Marshal's, so the artifact's are too.
// Not safe for concurrent use: a Writer's pushes are serialised.
type yamlCache struct {
	mu   sync.Mutex                // builds of one Writer never overlap; this keeps a misuse from corrupting the maps
	m    map[string]renderedObject // the previous build's
	next map[string]renderedObject // this build's, kept when it succeeds
}

// begin starts a build: what it renders replaces the cache at end.
func (c *yamlCache) begin() {
	if c != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.next = make(map[string]renderedObject, len(c.m))
	}
}

// end keeps the build's objects only (and forgets the objects removed
// since the previous one).
func (c *yamlCache) end() {
	if c != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.m, c.next = c.next, nil
	}
}

type renderedObject struct {
	json string
	yaml []byte
}

// render is yaml.Marshal(obj), from the cache when obj's JSON is the one
// rendered under key before. A nil cache renders.
func (c *yamlCache) render(key string, obj map[string]any) ([]byte, error) {
	if c == nil {
		return yaml.Marshal(obj)
	}
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("error marshaling into JSON: %w", err)
	}
	c.mu.Lock()
	r, ok := c.m[key]
	c.mu.Unlock()
	if !ok || r.json != string(j) {
		y, err := yaml.JSONToYAML(j)
		if err != nil {
			return nil, err
		}
		r = renderedObject{json: string(j), yaml: y}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.next == nil { // a build ended meanwhile
		c.next = map[string]renderedObject{}
	}
	c.next[key] = r
	return r.yaml, nil
}

// maxContent bounds what a fetched layer may expand to: an artifact of a
// few thousand objects is a few megabytes.
const maxContent = 256 << 20

// parseContent reads a layer written by content (or by hand, as long as
// it is a gzipped tar of YAML files: Flux's own layout). Every regular
// file whose name ends in .yaml or .yml holds one object or several,
// separated by "---" lines. A document that is not an object this layout
// holds (a kustomization.yaml, which `flux push artifact` of a kustomize
// directory carries; a manifest without a name; a second copy of an
// object) is not refused: it is listed in extra, by file name, so that a
// hand re-push is drift that the next publish replaces rather than an
// artifact nobody can publish over.
func parseContent(layer io.Reader) (Objects, []string, error) {
	zr, err := gzip.NewReader(layer)
	if err != nil {
		return nil, nil, fmt.Errorf("the artifact's layer is not gzip: %w", err)
	}
	defer zr.Close()
	tr := tar.NewReader(&boundedReader{r: zr, left: maxContent})
	out := Objects{}
	var extra []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			sort.Strings(extra)
			return out, extra, nil
		}
		if errors.Is(err, errTooLarge) {
			return nil, nil, err
		}
		if err != nil {
			return nil, nil, fmt.Errorf("the artifact's layer is not a tar: %w", err)
		}
		if hdr.Typeflag != tar.TypeReg || !(strings.HasSuffix(hdr.Name, ".yaml") || strings.HasSuffix(hdr.Name, ".yml")) {
			continue
		}
		raw, err := io.ReadAll(tr)
		if err != nil {
			return nil, nil, err
		}
		for _, doc := range splitDocuments(raw) {
			var m map[string]any
			if err := yaml.Unmarshal(doc, &m); err != nil {
				extra = append(extra, hdr.Name)
				continue
			}
			if len(m) == 0 {
				continue
			}
			k, err := Key(m)
			if _, dup := out[k]; err != nil || dup {
				extra = append(extra, hdr.Name)
				continue
			}
			out[k] = m
		}
	}
}

func splitDocuments(raw []byte) [][]byte {
	var docs [][]byte
	var cur []byte
	for _, line := range bytes.SplitAfter(raw, []byte("\n")) {
		if t := bytes.TrimRight(line, "\r\n"); bytes.Equal(t, []byte("---")) {
			docs = append(docs, cur)
			cur = nil
			continue
		}
		cur = append(cur, line...)
	}
	return append(docs, cur)
}

// errTooLarge is a layer over maxContent once uncompressed.
var errTooLarge = fmt.Errorf("the artifact's layer holds more than %d MiB once uncompressed", maxContent>>20)

// boundedReader reads at most left bytes of r and fails, rather than
// ending cleanly as io.LimitReader does, when r holds more: a tar cut on
// a header boundary would otherwise read as a complete, shorter archive.
type boundedReader struct {
	r    io.Reader
	left int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, err := io.ReadFull(b.r, one[:]); n == 0 && err != nil {
			if err == io.ErrUnexpectedEOF {
				err = io.EOF
			}
			return 0, err
		}
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}
