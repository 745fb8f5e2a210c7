package trafficpolicy

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition"
)

// Traffic policies behind the engine's typed interface (package
// composition): a policy's own contribution (NewPart), and the Composer
// that decodes, composes and digests contributions found on objects. The
// JSON of contributions is read and written here and in contribution.go
// only.

// Fields of a contribution that compose nothing: the configuration kept
// for import, and the provider version that wrote it. Neither is part of
// a digest (Composer.Canonical).
const (
	ContributionConfigKey   = "config"
	ContributionProviderKey = "provider"
)

// decoded is a contribution as read, with why it cannot be used (nil
// when it can): a composition.Contribution.
type decoded struct {
	c   Contribution
	err error
}

func (d decoded) Workspace() string { return d.c.Workspace }

func (d decoded) Name() string { return d.c.Policy.Name }

// Composer composes traffic policies' contributions (composition.Composer).
type Composer struct {
	// Registry resolves contributions of the first builds (version 0,
	// unresolved); nil, they cannot be composed.
	Registry *translate.Registry
	// Version is this provider's version, named when a contribution needs
	// a newer one.
	Version string
}

var _ composition.Composer = (*Composer)(nil)

// Decode is DecodeContribution; a contribution in a newer format is
// composition.Unreadable, naming this provider's version.
func (p *Composer) Decode(raw string) (composition.Contribution, error) {
	c, err := DecodeContribution(raw)
	var format *FormatError
	if errors.As(err, &format) {
		// A newer provider's: kept, never composed or removed.
		return decoded{c: c, err: err}, composition.Unreadable{Err: fmt.Errorf("%w; this provider is version %s", format, p.Version)}
	}
	return decoded{c: c, err: err}, err
}

// Compose is ComposeContributions of typed contributions.
func (p *Composer) Compose(key translate.Key, contributions map[string]composition.Contribution) (map[string]any, error) {
	read := make(map[string]decoded, len(contributions))
	for n, c := range contributions {
		d, ok := c.(decoded)
		if !ok {
			return nil, fmt.Errorf("the contribution of %q on the object is not a traffic policy's", n)
		}
		read[n] = d
	}
	return composeDecoded(key, read, p.Registry)
}

// Targets reports whether the policy of c, decoded without an error,
// writes an object of key's identity (any cluster when key.Cluster is
// empty).
func (p *Composer) Targets(key translate.Key, c composition.Contribution) bool {
	d, ok := c.(decoded)
	if !ok || d.err != nil {
		return false
	}
	n := d.c.Named
	if d.c.Version == 0 {
		if p.Registry == nil {
			return false
		}
		var err error
		if n, err = Resolve(n, p.Registry); err != nil {
			return false
		}
	}
	objs, err := composeQuietly([]Named{n})
	if err != nil {
		return false
	}
	for _, o := range objs {
		k := o.Key()
		if key.Cluster == "" {
			k.Cluster = ""
		}
		if k == key {
			return true
		}
	}
	return false
}

// Canonical is raw in one canonical form (sorted keys), without its kept
// configuration and provider version: written differently, or by another
// provider version, a policy composes the same objects.
func (p *Composer) Canonical(raw string) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal([]byte(raw), &fields) != nil {
		return raw
	}
	delete(fields, ContributionConfigKey)
	delete(fields, ContributionProviderKey)
	out, err := json.Marshal(fields)
	if err != nil {
		return raw
	}
	return string(out)
}

// NewPart is a policy's own contribution (NewContributions), typed: its
// values as written, checked as a reader decoding them would check them.
func NewPart(n Named, w Writer, reg *translate.Registry) (composition.Part, error) {
	whole, in, err := newContributions(n, w, reg)
	if err != nil {
		return composition.Part{}, err
	}
	p := composition.Part{Whole: whole.encoded()}
	if in != nil {
		p.In = make(map[string]composition.Encoded, len(in))
		for c, e := range in {
			p.In[c] = e.encoded()
		}
	}
	return p, nil
}

// UnresolvedPart is the policy as given, unresolved, standing in for its
// contribution at plan when it does not resolve (an error the translation
// reports, or a placement known only after apply). It is never written.
func UnresolvedPart(n Named, workspace string) composition.Part {
	raw := ""
	if b, err := json.Marshal(Contribution{Workspace: workspace, Named: n}); err == nil {
		raw = string(b)
	}
	return composition.Part{Whole: encoded(raw)}
}

// encoded is raw with its contribution, as a reader decodes it.
func encoded(raw string) composition.Encoded {
	c, err := DecodeContribution(raw)
	return composition.Encoded{Contribution: decoded{c: c, err: err}, Raw: raw}
}

// encoded is w typed and encoded, without decoding what was just encoded.
func (w written) encoded() composition.Encoded {
	return composition.Encoded{Contribution: decoded{c: w.c, err: w.c.checkWritten(w.raw)}, Raw: w.raw}
}

// WithConfig is p keeping the policy's configuration cfg (JSON) for
// import, in every cluster. The kept configuration composes nothing: a
// contribution this build wrote keeps its value, only its encoding and its
// check change.
func WithConfig(p composition.Part, cfg string) (composition.Part, error) {
	with := func(e composition.Encoded) (composition.Encoded, error) {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal([]byte(e.Raw), &fields); err != nil {
			return e, err
		}
		fields[ContributionConfigKey] = json.RawMessage(cfg)
		raw, err := json.Marshal(fields)
		if err != nil {
			return e, err
		}
		d, ok := e.Contribution.(decoded)
		if !ok {
			return encoded(string(raw)), nil
		}
		w := written{c: d.c, raw: string(raw)}
		w.c.Config = json.RawMessage(cfg)
		return w.encoded(), nil
	}
	whole, err := with(p.Whole)
	if err != nil {
		return p, err
	}
	out := composition.Part{Whole: whole}
	if p.In != nil {
		out.In = make(map[string]composition.Encoded, len(p.In))
		for c, e := range p.In {
			if out.In[c], err = with(e); err != nil {
				return p, err
			}
		}
	}
	return out, nil
}

// KeptConfig is the configuration kept in a contribution, if any.
func KeptConfig(raw string) (string, bool) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &fields); err != nil {
		return "", false
	}
	c, ok := fields[ContributionConfigKey]
	return string(c), ok
}

// composeQuietly composes policies found on objects (not validated by
// this build's rules, as composeDecoded does), a failure to render one
// an error.
func composeQuietly(policies []Named) (objs []translate.Object, err error) {
	defer func() {
		if r := recover(); r != nil {
			objs, err = nil, fmt.Errorf("the contribution cannot be composed by this provider: %v", r)
		}
	}()
	return compose(policies, registryOf(policies), false, false)
}
