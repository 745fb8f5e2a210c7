package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"

	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
)

// A cluster that is down degrades the apply in that cluster only (issue
// 38). An intent whose planned objects in an unreachable cluster are the
// ones its state already lists there, digest for digest, has nothing to
// change there: failing the whole intent for it would stop every resource
// that depends on it (a traffic policy on a virtual destination with a
// backend in the cluster that is down) from reaching the healthy clusters.
// So such a cluster's failures become one warning (ErrUnchangedUnreachable),
// its entries stay as state lists them, and the provider records it as a
// cluster that could not be written, which the next plan re-checks. A
// change that must reach the cluster (a new digest, a new object, an
// object to prune, an unconfirmed entry) still fails there, and only
// there.

// ErrUnchangedUnreachable marks the warning given for a cluster that could
// not be reached while nothing of the intent changes there.
var ErrUnchangedUnreachable = errors.New("the cluster could not be reached, and nothing of the intent changes there")

// UnreachableKept is the cause of that warning: why the cluster could not
// be reached (Reason, a sentence naming it), and how many objects were
// kept as in state.
type UnreachableKept struct {
	Reason  string
	Objects int
	Cause   error
}

func (k *UnreachableKept) Error() string { return k.Reason }

// Unwrap lets errors.Is find ErrUnchangedUnreachable and the cause.
func (k *UnreachableKept) Unwrap() []error { return []error{ErrUnchangedUnreachable, k.Cause} }

// unchangedIn reports whether the desired objects of one cluster are
// exactly its prior entries, with the same digests: an apply would change
// nothing there. An unconfirmed or unknown digest is a change (the object
// may not exist, or its content is not known to match).
func unchangedIn(desired []Desired, prior []Entry) bool {
	if len(desired) == 0 || len(desired) != len(prior) {
		return false
	}
	had := map[string]string{}
	for _, p := range prior {
		had[p.Key().String()] = p.Digest
	}
	for _, d := range desired {
		was, ok := had[d.Key().String()]
		if !ok || d.Digest == "" || d.Digest == DigestUnconfirmed || was != d.Digest {
			return false
		}
	}
	return true
}

// cannotReach reports whether a failure says the cluster could not be
// reached at all (refused or reset connection, unknown host, no answer in
// time, silent earlier in this run), as opposed to the cluster answering
// with an error status, or Terraform being interrupted.
func cannotReach(e *Error) bool {
	if e == nil || e.Err == nil || errors.Is(e.Err, context.Canceled) || errors.Is(e.Err, errNotOurs) {
		return false // interrupted, or refused as someone else's object
	}
	// An error status (403, 5xx) is an answer: neither a url.Error nor a
	// net.Error.
	var urlErr *url.Error
	var netErr net.Error
	return errors.Is(e.Err, kubeclient.ErrSilent) || errors.Is(e.Err, context.DeadlineExceeded) ||
		errors.As(e.Err, &urlErr) || errors.As(e.Err, &netErr)
}

// keepUnchanged decides the outcome of one cluster's writes: when every
// failure there says the cluster could not be reached and nothing of the
// intent changes there, its prior entries are kept and its failures become
// one warning; otherwise the writes' entries and errors stand.
func keepUnchanged(owner Owner, cluster string, desired []Desired, prior []Entry, got []Entry, errs []*Error) ([]Entry, []*Error) {
	if len(errs) == 0 || !unchangedIn(desired, prior) {
		return got, errs
	}
	for _, err := range errs {
		if !cannotReach(err) {
			return got, errs
		}
	}
	kept := &UnreachableKept{Reason: describe(cluster, errs[0].Err), Objects: len(prior), Cause: errs[0].Err}
	resource := intentkind.ResourceOf(owner.Kind, owner.Name)
	note := &Error{
		Cluster: cluster,
		Summary: fmt.Sprintf("Cluster %s could not be reached: %s unchanged there, kept as in state", cluster, resource),
		Detail: fmt.Sprintf("%s Nothing of %s changes in cluster %s in this apply (its %d objects there have the content state lists), "+
			"so the apply went on with the other clusters, and resources that depend on it are applied too. "+
			"Its objects in %s stay in state as they were, and the next plan re-checks them. "+
			"A change that must reach %s fails for that cluster only until it answers; then apply once more.",
			kept.Reason, resource, cluster, len(prior), cluster, cluster),
		Err: kept,
	}
	return prior, []*Error{note}
}

// failures are the errors of an apply other than the warnings for
// unchanged clusters that could not be reached.
func failures(errs Errors) Errors {
	var out Errors
	for _, e := range errs {
		if !errors.Is(e.Err, ErrUnchangedUnreachable) {
			out = append(out, e)
		}
	}
	return out
}
