package shareddata

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// One verdict per contribution on a shared object (docs/design.md,
// "Contributions: one verdict"). Whether a contribution found on an
// object is this instance's, another live state's, an orphan of this
// state's roster, unreadable or untrusted is decided here and only here:
// the plan (provider's checkComposition), the apply and destroy (compose),
// refresh (composedDriftedFrom) and the roster (orphans) all ask Judge,
// and the plan's diagnostics and the apply's errors are the verdict's
// Problem, word for word.
//
// Trust is by content and by what the object itself says, never by who
// last wrote it: a contribution its kind's composer decodes is composed
// and kept byte for byte, whoever holds its annotation in managedFields.
// An object restored from a backup (re-created without managedFields)
// is therefore composed exactly as before. Who may write a contribution
// at all is Kubernetes RBAC's to say, as for the composed object itself
// (docs/security.md).

// Standing is the class of a verdict.
type Standing string

// The standings a contribution can have.
const (
	// Mine: this instance's contribution.
	Mine Standing = "this instance's"
	// Held: the same name from another instance this state holds: its
	// previous instance, which an apply replaces; or, with
	// create_before_destroy, its next one, which the destroy of the old
	// instance leaves alone (a release removes only its own instance's
	// contribution).
	Held Standing = "another instance of this state's"
	// Theirs: another intent's, well-formed: composed, kept byte for byte.
	Theirs Standing = "another state's"
	// Orphan: a contribution of an instance this state's roster held
	// whose policy no listed or held policy is any more.
	Orphan Standing = "an orphan of this state's roster"
	// Taken: the same name from an instance this state does not hold.
	Taken Standing = "the same name from another instance"
	// Undecided: the same name with no instance recorded, so nothing says
	// whose it is.
	Undecided Standing = "the same name without an instance"
	// Unreadable: a newer provider's format: kept, and the object is not
	// written.
	Unreadable Standing = "in a newer format"
	// Untrusted: not a valid contribution (the composer refuses it, or
	// its label has no annotation): never composed, removed by the next
	// writer (replaced, when it has this intent's name).
	Untrusted Standing = "not a valid contribution"
)

// Verdict is what a writer makes of one contribution found on an object.
type Verdict struct {
	engine.LiveContribution
	// Kind is the intent kind of the contribution.
	Kind     string
	Standing Standing
	// Self is the writer's name and instance, and the workspace its
	// contribution names, for messages.
	Self, SelfID, SelfWorkspace string
}

// Judge gives o's verdict on each contribution of found, in order.
func Judge(o engine.Owner, found []engine.LiveContribution) []Verdict {
	out := make([]Verdict, len(found))
	for i, c := range found {
		out[i] = judge(o, c)
	}
	return out
}

// judge is the one verdict function.
func judge(o engine.Owner, c engine.LiveContribution) Verdict {
	v := Verdict{LiveContribution: c, Kind: o.Kind, Self: o.Name, SelfID: o.ID}
	var own func(string) bool
	var orphan func(engine.LiveContribution) bool
	if o.Composition != nil {
		own, orphan = o.Composition.Own, o.Composition.Orphan
		if w := o.Composition.Contribution.Whole.Contribution; w != nil {
			v.SelfWorkspace = w.Workspace()
		}
	}
	switch {
	case c.Unreadable:
		v.Standing = Unreadable
	case c.Untrusted != "":
		// The same name's is replaced by this intent's; another name's
		// is removed. Either way it is nobody's to claim.
		v.Standing = Untrusted
	case c.Contribution != nil && c.Contribution.Name() != "" && c.Contribution.Name() != c.Name:
		// Filed under another name (copied or renamed by hand): its
		// composer refuses it under that name, so it is never composed.
		v.Standing, v.Untrusted = Untrusted, fmt.Sprintf("its content is %s %q's, filed under the name %q (an annotation copied or renamed by hand)",
			strings.ReplaceAll(o.Kind, "-", " "), c.Contribution.Name(), c.Name)
	case o.Name != "" && c.Name == o.Name:
		switch {
		case c.ID != "" && c.ID == o.ID:
			v.Standing = Mine
		case c.ID != "" && own != nil && own(c.ID):
			v.Standing = Held
		case c.ID == "":
			v.Standing = Undecided
		default:
			v.Standing = Taken
		}
	case orphan != nil && c.ID != "" && orphan(c):
		v.Standing = Orphan
	default:
		v.Standing = Theirs
	}
	return v
}

// Composed reports whether the contribution is composed into the object
// by a writer other than its own intent.
func (v Verdict) Composed() bool {
	return v.Standing == Theirs || v.Standing == Orphan
}

// KeptByTheWrite is whether o's write of a composed object keeps a
// contribution found on it, by the one verdict: another state's and an
// orphan's are composed, one in a newer format is kept as it is (and
// refuses the write); o's own, another instance's of o's name, one
// without an instance and one that is not valid are replaced or removed
// (or refuse the plan). The plan's annotation limit counts what it keeps
// (engine.Limits).
func KeptByTheWrite(o engine.Owner) func(engine.LiveContribution) bool {
	return func(c engine.LiveContribution) bool {
		v := judge(o, c)
		return v.Composed() || v.Standing == Unreadable
	}
}

// Problem is what a verdict says to the user: an error (plan and apply
// both fail) or a warning (the plan shows it; the apply logs it).
type Problem struct {
	Error           bool
	Summary, Detail string
}

// Problem is the verdict's message, nil when there is nothing to say.
func (v Verdict) Problem() *Problem {
	kind := strings.ReplaceAll(v.Kind, "-", " ")
	annotation := v.Annotation(v.Kind)
	where := v.Entry.String()
	switch v.Standing {
	case Unreadable:
		return &Problem{Error: true, Summary: "Contribution in a newer format",
			Detail: fmt.Sprintf("%s holds the contribution of %s %q (annotation %s), which this provider cannot compose: %s. "+
				"Nothing was written to it, and no apply of this provider writes it while that contribution is there: writing it without that contribution would remove that policy's routes. Upgrade this provider to the version named; the contribution is left as it is.",
				where, kind, v.Name, annotation, v.Untrusted)}
	case Taken:
		return &Problem{Error: true, Summary: "Name taken by another instance",
			Detail: fmt.Sprintf("%s already holds %s (%s %q) from instance %s (workspace %s), which this state does not hold; this state's workspace is %s. "+
				"Names identify contributions on a shared object, and only the instance that wrote a contribution replaces or releases it: workspace names are labels, not identities. "+
				"If that policy is another state's, rename this one. If it is this state's own (its resource was removed with `terraform state rm` or lost with the state), import it instead of creating it: `terraform import <address> %s`.",
				where, annotation, kind, v.Name, v.ID, engine.WorkspaceName(v.Workspace), engine.WorkspaceName(v.SelfWorkspace), v.Name)}
	case Undecided:
		return &Problem{Error: true, Summary: "Name taken by a contribution without an instance",
			Detail: fmt.Sprintf("%s already holds %s (%s %q), which records no instance ID (its label is not an instance), so nothing tells whose it is. "+
				"It is never replaced on the strength of its name: rename this policy, or, if that contribution is this state's, remove its annotation and label by hand and apply again.",
				where, annotation, kind, v.Name)}
	case Untrusted:
		if v.Self != "" && v.Name == v.Self {
			return &Problem{Summary: "Contribution not valid",
				Detail: fmt.Sprintf("Annotation %s on %s is not a valid contribution: %s. It is never composed; this %s's apply replaces it with its own.", annotation, where, v.Untrusted, kind)}
		}
		return &Problem{Summary: "Contribution not valid",
			Detail: fmt.Sprintf("Annotation %s on %s is not used: %s. It is never composed into the object; the next apply that writes the object removes it, and its policy's own next apply writes it again.", annotation, where, v.Untrusted)}
	}
	return nil
}

// err is the verdict's problem as the apply's error on entry, or nil when
// it is not an error.
func (v Verdict) err(entry engine.Entry) *engine.Error {
	p := v.Problem()
	if p == nil || !p.Error {
		return nil
	}
	return &engine.Error{Cluster: entry.Cluster, Object: entry.String(), Summary: p.Summary, Detail: p.Detail}
}

// contributionsOn reads the contributions of o's kind on live, the object
// en: one per annotation, and one per label without its annotation (a
// leftover, untrusted). It is the one reading of a contribution: decode,
// newer format, not valid.
func contributionsOn(o engine.Owner, en engine.Entry, live *unstructured.Unstructured) []engine.LiveContribution {
	raws, ids := engine.ContributionsOf(live, o.Kind)
	return readContributions(o, en, raws, ids)
}

// readContributions decodes raws (by name, with their instances ids) as
// found on en, in name order; a name in ids without a raw value is a
// label without its annotation.
func readContributions(o engine.Owner, en engine.Entry, raws, ids map[string]string) []engine.LiveContribution {
	names := make([]string, 0, len(raws))
	for n := range raws {
		names = append(names, n)
	}
	for n := range ids {
		if _, ok := raws[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := make([]engine.LiveContribution, 0, len(names))
	for _, n := range names {
		raw, has := raws[n]
		lc := engine.LiveContribution{Entry: en, Name: n, ID: ids[n], Raw: raw}
		if !has {
			lc.Untrusted = "its label has no annotation (a leftover)"
			out = append(out, lc)
			continue
		}
		c, err := decode(o, raw)
		lc.Contribution, lc.Workspace = c, workspaceOf(c)
		if err != nil {
			lc.Untrusted, lc.Unreadable = err.Error(), unreadable(err) != nil
		}
		out = append(out, lc)
	}
	return out
}
