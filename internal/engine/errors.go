package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
)

// Error is one failure, tied to a cluster and, where there is one, the
// object. Summary says what was being done; Detail says why it failed and
// how to fix it.
type Error struct {
	Cluster string
	Object  string
	Summary string
	Detail  string
	Err     error

	// hint is the kubectl command Detail suggests, if any, and render
	// writes Detail around that command as rendered for Cluster
	// (Engine.renderHints); until then Detail holds it rendered with
	// --context named like the cluster.
	hint   *kubeclient.Hint
	render func(command string) string
}

func (e *Error) Error() string { return e.Summary + ": " + e.Detail }
func (e *Error) Unwrap() error { return e.Err }

// Errors are the failures of one operation across clusters.
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Unwrap lets errors.Is and errors.As look into every failure.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// Err returns nil when there are no errors.
func (es Errors) Err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

func (es Errors) sort() {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Cluster != es[j].Cluster {
			return es[i].Cluster < es[j].Cluster
		}
		return es[i].Object < es[j].Object
	})
}

// clusterError explains why a cluster could not be used at all.
func clusterError(cluster, doing string, err error) *Error {
	return &Error{
		Cluster: cluster,
		Summary: fmt.Sprintf("%s in cluster %s", doing, cluster),
		Detail:  describe(cluster, err),
		Err:     err,
	}
}

// objectError explains why one object could not be written or read.
func objectError(e Entry, doing string, err error) *Error {
	out := &Error{
		Cluster: e.Cluster,
		Object:  e.String(),
		Summary: fmt.Sprintf("%s %s", doing, e),
		Err:     err,
	}
	if h, render := hintFor(e, err); render != nil {
		out.hint, out.render = &h, render
		out.Detail = render(kubeclient.Kubectl(kubeclient.Connection{Name: e.Cluster}, h))
		return out
	}
	out.Detail = describeObject(e, err)
	return out
}

// hintFor is the kubectl command that fixes err, and the detail around
// it; a nil render when no command does.
func hintFor(e Entry, err error) (kubeclient.Hint, func(command string) string) {
	var status apierrors.APIStatus
	if apierrors.IsNotFound(err) && !isMissingResource(err) && errors.As(err, &status) && status.Status().Details != nil && status.Status().Details.Kind == "namespaces" {
		ns := status.Status().Details.Name
		return kubeclient.CreateNamespace(ns), func(command string) string {
			return fmt.Sprintf("Namespace %s does not exist in cluster %s. Create it (%s)%s, then apply again.", ns, e.Cluster, command, recordsHint(e))
		}
	}
	return kubeclient.Hint{}, nil
}

// HintSource renders a kubectl hint for a cluster as the provider reaches
// it (kubeclient.Set does).
type HintSource interface {
	Kubectl(cluster string, h kubeclient.Hint) string
}

// finishApplyErrors completes the errors of an apply that wrote to the
// given clusters: kubectl hints rendered for each cluster as the engine's
// clients reach it (when they can say how), and, for a cluster that could
// not be reached, that the others were written all the same. Only an apply
// says so: the same error at plan, where nothing is written, does not.
func (e *Engine) finishApplyErrors(errs Errors, clusters []string) {
	e.renderHints(errs)
	for _, er := range errs {
		if len(clusters) > 1 && er.Err != nil && unreachable(er.Err) {
			er.Detail += " Objects in the other clusters were still applied and are recorded in state."
		}
	}
}

// renderHints renders the errors' kubectl hints for each cluster as the
// engine's clients reach it (when they can say how): at apply, and for
// the plan's own checks (preflight.go).
func (e *Engine) renderHints(errs Errors) {
	src, _ := e.Clients.(HintSource)
	for _, er := range errs {
		if src != nil && er.hint != nil && er.render != nil {
			er.Detail = er.render(src.Kubectl(er.Cluster, *er.hint))
		}
	}
}

// unreachable reports an error describe explains as a cluster that cannot
// be reached (and not as a timeout, a cancellation, a plugin's failure or
// a cluster no longer registered).
func unreachable(err error) bool {
	var netErr net.Error
	var urlErr *url.Error
	switch {
	case errors.Is(err, kubeclient.ErrNotRegistered), strings.Contains(err.Error(), "getting credentials: exec"), kubeclient.ExecErrorIn(err) != nil,
		errors.Is(err, kubeclient.ErrSilent), errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout(),
		errors.Is(err, context.Canceled):
		return false
	}
	return errors.As(err, &urlErr)
}

// describe turns transport and API errors into a sentence a platform
// engineer can act on. It never includes credentials: client-go's errors
// carry the URL and the status, not the request headers.
func describe(cluster string, err error) string {
	var netErr net.Error
	var urlErr *url.Error
	var silent *kubeclient.SilentError
	execErr := kubeclient.ExecErrorIn(err)
	switch {
	case errors.Is(err, kubeclient.ErrNotRegistered):
		return fmt.Sprintf("Cluster %s is no longer in the provider's clusters, but this intent still has objects there (see objects in state), "+
			"which can be neither updated nor deleted. Add the cluster back to the provider block to let apply or destroy remove them. "+
			"If the cluster itself is gone for good, add %q to the provider's retired_clusters: those objects are then dropped from state, with a warning, without contacting it.", cluster, cluster)
	case execErr != nil:
		stderr := strings.TrimSpace(execErr.Stderr)
		if stderr == "" {
			stderr = "(it wrote nothing to stderr)"
		}
		return fmt.Sprintf("The exec credential plugin %q of cluster %s %s. Its stderr: %s. Fix what it reports and run it by hand where Terraform runs to check; a plugin that waits for an interactive login cannot run under Terraform.", execErr.Command, cluster, execErr.Outcome, stderr)
	case strings.Contains(err.Error(), "getting credentials: exec"):
		return fmt.Sprintf("The exec credential plugin of cluster %s failed, or did not finish within the provider's request_timeout and was stopped (%v). Run the plugin by hand where Terraform runs to see why; a plugin that waits for an interactive login cannot run under Terraform.", cluster, err)
	case errors.As(err, &silent):
		return fmt.Sprintf("Cluster %s did not answer in time earlier in this run (%v), so the provider does not ask it again until the next Terraform command. Check that its API server is reachable from where Terraform runs, or raise the provider's request_timeout.", cluster, silent.First)
	case errors.Is(err, kubeclient.ErrSilent):
		return fmt.Sprintf("Cluster %s %v. Check that its API server is reachable from where Terraform runs, or raise the provider's request_timeout.", cluster, kubeclient.ErrSilent)
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return fmt.Sprintf("Cluster %s did not answer in time (%v). Check that its API server is reachable from where Terraform runs, or raise the provider's request_timeout.", cluster, err)
	case errors.Is(err, context.Canceled):
		return fmt.Sprintf("The request to cluster %s was cancelled before the cluster answered, because Terraform was interrupted (%v). Apply again to finish; state lists every object that may have been written.", cluster, err)
	case errors.As(err, &urlErr):
		return fmt.Sprintf("Cluster %s is unreachable: %v. Check its connection settings and network path.", cluster, err)
	case apierrors.IsUnauthorized(err):
		return fmt.Sprintf("Cluster %s rejected the credentials (401 Unauthorized): %v. Check the token, client certificate or exec plugin of this cluster.", cluster, err)
	case apierrors.IsForbidden(err):
		return fmt.Sprintf("Cluster %s denied the request (403 Forbidden): %v. Grant the provider's identity the ClusterRole shown in the README (get, list, create, patch, delete on the Istio networking and security resources it writes and on configmaps).", cluster, err)
	}
	return fmt.Sprintf("Cluster %s: %v", cluster, err)
}

func describeObject(e Entry, err error) string {
	if apierrors.IsNotFound(err) && isMissingResource(err) {
		return fmt.Sprintf("Cluster %s does not serve %s %s: Istio's CRDs are not installed there. Install Istio (istioctl install, or the istio/base Helm chart) in cluster %s, then apply again.", e.Cluster, e.APIVersion, e.Kind, e.Cluster)
	}
	if apierrors.IsInvalid(err) {
		return fmt.Sprintf("The API server of cluster %s rejected the object: %v. This is a bug in the provider's translation; please report it with your configuration.", e.Cluster, err)
	}
	return describe(e.Cluster, err)
}

// isMissingResource tells a 404 for an unknown resource type (no CRD) from
// a 404 for a missing object: only the former has no object name in it.
func isMissingResource(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d == nil || d.Name == ""
}

// conflictManagers lists the field managers and fields a server-side-apply
// conflict names, from the status causes.
func conflictManagers(err error) (managers []string, fields []string) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil, nil
	}
	seen := map[string]bool{}
	for _, c := range status.Status().Details.Causes {
		if c.Type != metav1.CauseTypeFieldManagerConflict {
			continue
		}
		fields = append(fields, c.Field)
		if m := quoted(c.Message); m != "" && !seen[m] {
			seen[m] = true
			managers = append(managers, m)
		}
	}
	return managers, fields
}

func quoted(s string) string {
	i := strings.IndexByte(s, '"')
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(s[i+1:], '"')
	if j < 0 {
		return ""
	}
	return s[i+1 : i+1+j]
}

func conflictError(e Entry, managers, fields []string, err error) *Error {
	return &Error{
		Cluster: e.Cluster,
		Object:  e.String(),
		Summary: fmt.Sprintf("Conflict applying %s", e),
		Detail: fmt.Sprintf("Fields %s of %s are managed by field manager %s, which applied different values. "+
			"Another tool or intent owns them; the provider will not overwrite them silently. "+
			"To take ownership, set force_conflicts = true in the provider block (or remove these fields from the other manager's configuration) and apply again.",
			strings.Join(fields, ", "), e, quoteAll(managers)),
		Err: err,
	}
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// conflictFields lists the fields a server-side-apply conflict names; none
// for a plain optimistic-concurrency conflict.
func conflictFields(err error) []string {
	_, fields := conflictManagers(err)
	return fields
}

// recordsHint explains the records namespace when the object is a record.
func recordsHint(e Entry) string {
	if e.Kind != "ConfigMap" {
		return ""
	}
	return ": virtual destination records live there (the provider's records_namespace), and the provider's ConfigMap access is granted there alone (examples/rbac)"
}

// WorkspaceName shows a workspace identity in messages.
func WorkspaceName(ws string) string {
	if ws == "" {
		return "(none recorded: its provider's workspace was not set, or an earlier build wrote it)"
	}
	return fmt.Sprintf("%q", ws)
}
