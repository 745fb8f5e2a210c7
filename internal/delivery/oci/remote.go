package oci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Target is one artifact: a repository and a tag, with how to reach it.
type Target struct {
	// Repository is a reference without tag or digest:
	// registry.example.com/mesh/east.
	Repository string
	Tag        string
	// Insecure allows plain HTTP (a registry in a private network or a
	// test).
	Insecure    bool
	Credentials Credentials
	// Transport, when set, carries the requests (tests; nil is
	// http.DefaultTransport).
	Transport http.RoundTripper
	// Timeout bounds each operation (a digest read, a fetch, a push)
	// whatever the caller's context allows: Terraform's has no deadline,
	// and a registry that accepts connections and never answers would
	// hang the run. Zero is DefaultTimeout.
	Timeout time.Duration
}

// DefaultTimeout bounds one registry operation when Target.Timeout is 0.
const DefaultTimeout = 60 * time.Second

// bounded is ctx with t's per-operation deadline.
func (t Target) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	d := t.Timeout
	if d <= 0 {
		d = DefaultTimeout
	}
	return context.WithTimeout(ctx, d)
}

// String is the artifact's reference, repository:tag.
func (t Target) String() string { return t.Repository + ":" + t.Tag }

// Normalized is the artifact's reference as the registry resolves it
// (docker.io/x and index.docker.io/library/x are one), so that two
// spellings of one artifact compare equal; String if it does not parse.
func (t Target) Normalized() string {
	ref, err := t.ref()
	if err != nil {
		return t.String()
	}
	return ref.Name()
}

// ParseRepository checks a repository reference: a registry host and a
// path, without a tag or a digest. The error says what is wrong.
func ParseRepository(repository string, insecure bool) error {
	// '@' before the path is user:password@host, after it a digest: the
	// value is not quoted, in case it holds a credential.
	if strings.Contains(repository, "@") {
		return errors.New("the repository holds '@': write it without credentials (set username and password, or token) and without a digest (the provider chooses the tag)")
	}
	if strings.Contains(repository, "://") {
		return fmt.Errorf("%q: write the repository without a scheme (registry.example.com/mesh/east)", repository)
	}
	if !strings.Contains(repository, "/") {
		return fmt.Errorf("%q: name the registry host too (registry.example.com/%s)", repository, repository)
	}
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	_, err := name.NewRepository(repository, append(opts, name.StrictValidation)...)
	if err != nil {
		if last := repository[strings.LastIndex(repository, "/")+1:]; strings.Contains(last, ":") {
			return fmt.Errorf("%q: write the repository without a tag; the provider chooses the tag", repository)
		}
		return fmt.Errorf("%q is not a repository reference (registry.example.com/mesh/east): %w", repository, err)
	}
	return nil
}

func (t Target) ref() (name.Tag, error) {
	if err := ParseRepository(t.Repository, t.Insecure); err != nil {
		return name.Tag{}, err
	}
	var opts []name.Option
	if t.Insecure {
		opts = append(opts, name.Insecure)
	}
	return name.NewTag(t.String(), opts...)
}

func (t Target) options(ctx context.Context, ref name.Tag) ([]remote.Option, error) {
	auth, err := t.Credentials.authenticator(ref.RegistryStr())
	if err != nil {
		return nil, err
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuth(auth), remote.WithUserAgent(SourceValue)}
	if t.Transport != nil {
		opts = append(opts, remote.WithTransport(t.Transport))
	}
	return opts, nil
}

// Image builds the artifact of objs published by publisher: Flux's media
// types, one layer, the annotations. Its digest is a function of objs and
// publisher only.
func Image(objs Objects, publisher string) (v1.Image, error) {
	return image(objs, publisher, nil)
}

// image is Image, with the objects' YAML from cache where they did not
// change since its previous build (a Writer's).
func image(objs Objects, publisher string, cache *yamlCache) (v1.Image, error) {
	layerBytes, err := content(objs, cache)
	if err != nil {
		return nil, err
	}
	layer := static.NewLayer(layerBytes, ContentMediaType)
	img, err := mutate.Append(empty.Image, mutate.Addendum{Layer: layer})
	if err != nil {
		return nil, err
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, ConfigMediaType)
	digest, err := layer.Digest()
	if err != nil {
		return nil, err
	}
	anns := map[string]string{
		AnnotationSource:    SourceValue,
		AnnotationRevision:  digest.String(),
		AnnotationCreated:   createdValue,
		AnnotationPublisher: publisher,
		AnnotationFormat:    FormatVersion,
	}
	out, ok := mutate.Annotations(img, anns).(v1.Image)
	if !ok {
		return nil, errors.New("annotating the artifact: not an image")
	}
	return out, nil
}

// Publish pushes the artifact of objs to t's tag and returns its digest.
// It pushes nothing when the tag already holds that digest.
func Publish(ctx context.Context, t Target, objs Objects, publisher string) (string, error) {
	img, err := Image(objs, publisher)
	if err != nil {
		return "", err
	}
	digest, err := img.Digest()
	if err != nil {
		return "", err
	}
	head, _, err := resolve(ctx, t)
	if err != nil {
		return "", err
	}
	return write(ctx, t, img, digest.String(), head)
}

// errTagMoved is a tag that named another digest than the one the
// change was made on when the new artifact was about to be tagged:
// another writer published in between.
var errTagMoved = errors.New("the tag moved while the artifact was being pushed")

// write pushes img (of digest) unless head, the digest the tag names now
// ("" for none), is already it. The artifact is pushed by digest first
// (its blobs and manifest, which move no tag), then the tag is read again
// and moved only if it still names head: a push of another writer during
// the upload is errTagMoved, not a lost update. (What is left is the
// moment between that read and the tag's PUT: registries offer no
// conditional tag write.)
func write(ctx context.Context, t Target, img v1.Image, digest, head string) (string, error) {
	if head == digest {
		return head, nil
	}
	ref, err := t.ref()
	if err != nil {
		return "", err
	}
	wctx, cancel := t.bounded(ctx)
	defer cancel()
	opts, err := t.options(wctx, ref)
	if err != nil {
		return "", err
	}
	if err := remote.Write(ref.Context().Digest(digest), img, opts...); err != nil {
		return "", registryError("publishing", t, err)
	}
	now, _, err := resolve(ctx, t)
	if err != nil {
		return "", err
	}
	if now != head {
		return "", errTagMoved
	}
	if err := remote.Tag(ref, img, opts...); err != nil {
		return "", registryError("publishing", t, err)
	}
	return digest, nil
}

// resolve is the digest the tag names, found false when there is none.
// A HEAD's 404 is confirmed by a GET: a registry whose HEAD answers 404
// for a tag that exists (a proxy that does not forward HEAD, a cache
// behind a push) must not read as an absent artifact, which the Writer
// would publish over from empty.
func resolve(ctx context.Context, t Target) (string, bool, error) {
	head, found, err := Head(ctx, t)
	if err != nil || found {
		return head, found, err
	}
	return digestBy(ctx, t, func(ref name.Reference, opts ...remote.Option) (v1.Hash, error) {
		desc, err := remote.Get(ref, opts...)
		if err != nil {
			return v1.Hash{}, err
		}
		return desc.Digest, nil
	})
}

// Head returns the digest the tag names; found is false when the tag (or
// the repository) does not exist.
func Head(ctx context.Context, t Target) (digest string, found bool, err error) {
	return digestBy(ctx, t, func(ref name.Reference, opts ...remote.Option) (v1.Hash, error) {
		desc, err := remote.Head(ref, opts...)
		if err != nil {
			return v1.Hash{}, err
		}
		return desc.Digest, nil
	})
}

// digestBy asks the registry, with read (a HEAD or a GET of the
// manifest), for the digest the tag names, within the target's deadline;
// found is false when the tag (or the repository) does not exist.
func digestBy(ctx context.Context, t Target, read func(name.Reference, ...remote.Option) (v1.Hash, error)) (string, bool, error) {
	ref, err := t.ref()
	if err != nil {
		return "", false, err
	}
	ctx, cancel := t.bounded(ctx)
	defer cancel()
	opts, err := t.options(ctx, ref)
	if err != nil {
		return "", false, err
	}
	digest, err := read(ref, opts...)
	if notFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, registryError("reading the digest of", t, err)
	}
	return digest.String(), true, nil
}

// Artifact is what a tag holds.
type Artifact struct {
	Digest    string
	Publisher string
	Objects   Objects
	// Extra names the files whose documents are not objects of this
	// layout (parseContent): someone else's, dropped by the next publish.
	Extra []string
}

// Fetch reads the artifact the tag names; found is false when there is
// none. An artifact that is not in our layout (another media type, more
// layers, a format this build does not know) is an error that says so.
func Fetch(ctx context.Context, t Target) (a Artifact, found bool, err error) {
	ref, err := t.ref()
	if err != nil {
		return Artifact{}, false, err
	}
	ctx, cancel := t.bounded(ctx) // the layers are read below, within it
	defer cancel()
	opts, err := t.options(ctx, ref)
	if err != nil {
		return Artifact{}, false, err
	}
	img, err := remote.Image(ref, opts...)
	if notFound(err) {
		return Artifact{}, false, nil
	}
	if err != nil {
		return Artifact{}, false, registryError("fetching", t, err)
	}
	a, err = read(img)
	if err != nil {
		return Artifact{}, false, fmt.Errorf("artifact %s: %w", t, err)
	}
	return a, true, nil
}

func read(img v1.Image) (Artifact, error) {
	digest, err := img.Digest()
	if err != nil {
		return Artifact{}, err
	}
	m, err := img.Manifest()
	if err != nil {
		return Artifact{}, err
	}
	if m.Config.MediaType != ConfigMediaType {
		return Artifact{}, fmt.Errorf("config media type %q, not Flux's %s: %w", m.Config.MediaType, ConfigMediaType, ErrNotFlux)
	}
	if f := m.Annotations[AnnotationFormat]; f != "" && f != FormatVersion {
		return Artifact{}, fmt.Errorf("written in format %s, which this build does not read (it reads %s): upgrade the provider", f, FormatVersion)
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != ContentMediaType {
		return Artifact{}, fmt.Errorf("expected one layer of %s, found %d layers", ContentMediaType, len(m.Layers))
	}
	layers, err := img.Layers()
	if err != nil {
		return Artifact{}, err
	}
	rc, err := layers[0].Compressed()
	if err != nil {
		return Artifact{}, err
	}
	defer rc.Close()
	objs, extra, err := parseContent(rc)
	if err != nil {
		return Artifact{}, err
	}
	// Drain to the end, so the layer's digest is verified.
	if _, err := io.Copy(io.Discard, rc); err != nil {
		return Artifact{}, err
	}
	return Artifact{Digest: digest.String(), Publisher: m.Annotations[AnnotationPublisher], Objects: objs, Extra: extra}, nil
}

// ErrNotFlux is an artifact that is not in Flux's format at all (its
// config's media type is not Flux's): a cosign signature, attestation or
// SBOM stored beside the artifacts, an image. One in Flux's format that
// this build cannot read is another error.
var ErrNotFlux = errors.New("not a Flux artifact")

// notFound reports whether err says the tag (or its repository) does not
// exist: a 404 to a request for the manifest. A 404 to anything else (the
// /v2/ ping of a host that is not a registry, a misrouted ingress) is the
// registry not answering, never an empty artifact.
func notFound(err error) bool {
	var te *transport.Error
	if !errors.As(err, &te) {
		return false
	}
	if te.Request == nil || !strings.Contains(te.Request.URL.Path, "/manifests/") {
		return false
	}
	if te.StatusCode == http.StatusNotFound {
		return true
	}
	for _, d := range te.Errors {
		if d.Code == transport.ManifestUnknownErrorCode || d.Code == transport.NameUnknownErrorCode {
			return true
		}
	}
	return false
}

// RegistryError is a registry that could not be reached or refused a
// request. Its message names the artifact and the cause, never a
// credential.
type RegistryError struct {
	Op     string
	Target string
	Err    error
}

func (e *RegistryError) Error() string {
	return fmt.Sprintf("%s artifact %s: %v", e.Op, e.Target, e.Err)
}

func (e *RegistryError) Unwrap() error { return e.Err }

// Unauthorized reports whether the registry refused the credentials.
func (e *RegistryError) Unauthorized() bool {
	var te *transport.Error
	return errors.As(e.Err, &te) && (te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden)
}

func registryError(op string, t Target, err error) error {
	return &RegistryError{Op: op, Target: t.String(), Err: err}
}

// Tags lists the tags of t's repository, t's own included: the artifacts
// other states publish for the same cluster (each state's tag is its
// workspace). A repository that does not exist has none.
func Tags(ctx context.Context, t Target) ([]string, error) {
	ref, err := t.ref()
	if err != nil {
		return nil, err
	}
	ctx, cancel := t.bounded(ctx)
	defer cancel()
	opts, err := t.options(ctx, ref)
	if err != nil {
		return nil, err
	}
	tags, err := remote.List(ref.Context(), opts...)
	if err != nil {
		var te *transport.Error
		if errors.As(err, &te) && te.Request != nil && strings.HasSuffix(te.Request.URL.Path, "/tags/list") && nameUnknown(te) {
			return nil, nil
		}
		return nil, registryError("listing the tags beside", t, err)
	}
	return tags, nil
}

// nameUnknown reports whether te says the repository does not exist.
func nameUnknown(te *transport.Error) bool {
	if te.StatusCode != http.StatusNotFound {
		return false
	}
	for _, d := range te.Errors {
		if d.Code != transport.NameUnknownErrorCode {
			return false
		}
	}
	return true
}
