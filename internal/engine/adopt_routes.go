package engine

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Adoption of hand-written VirtualServices and DestinationRules with
// names of their own (issue 38). An intent with adopt_existing takes over
// such an object when it writes an object of the same kind on the same
// host in the same cluster: the apply writes the intent's own, then
// deletes the hand-written one with a UID and resourceVersion
// precondition, so that exactly one object of that kind serves the host
// afterwards. One whose meaning the intent cannot carry (other hosts,
// routes to hosts the intent does not declare, gateways, delegation, a
// workload selector) is refused at plan, named with the reason, and
// nothing is written. Objects of a kind the intent does not write on the
// host are neither: they stay the plan's warning (ForeignRoutes).

// HandWritten is a VirtualService or DestinationRule this provider did not
// write that names a host an intent's objects name in its cluster.
type HandWritten struct {
	Cluster, Kind, Namespace, Name string
	// Host is the intent's host it names.
	Host            string
	UID             types.UID
	ResourceVersion string
	// Takes reports whether the intent writes an object of this kind on
	// Host in Cluster: only then can it adopt this one.
	Takes bool
	// Why says why the intent cannot take it over; empty when it can.
	Why string
}

// String is "<Kind> <namespace>/<name> in cluster <c> (host <h>)".
func (h HandWritten) String() string {
	return fmt.Sprintf("%s %s/%s in cluster %s (host %s)", h.Kind, h.Namespace, h.Name, h.Cluster, h.Host)
}

// Key is the object's key in the objects attribute's form
// (<cluster>/<Kind>.networking.istio.io/<namespace>/<name>), under which a
// plan records it (the resources' adopted attribute).
func (h HandWritten) Key() string {
	return Entry{Cluster: h.Cluster, APIVersion: "networking.istio.io/v1", Kind: h.Kind, Namespace: h.Namespace, Name: h.Name}.StateKey()
}

// Stamp is what a plan records of the object besides its key: the host it
// names and the UID and resourceVersion read, "host=<h> uid=<u>
// resourceVersion=<rv>" (HandWrittenFromRecord reads it back).
func (h HandWritten) Stamp() string {
	return "host=" + h.Host + " uid=" + string(h.UID) + " resourceVersion=" + h.ResourceVersion
}

// HandWrittenFromRecord reads back a hand-written object a plan recorded
// under Key with Stamp.
func HandWrittenFromRecord(key, stamp string) (HandWritten, error) {
	e, err := EntryFromStateKey(key, "")
	if err != nil {
		return HandWritten{}, err
	}
	h := HandWritten{Cluster: e.Cluster, Kind: e.Kind, Namespace: e.Namespace, Name: e.Name, Takes: true}
	for _, f := range strings.Fields(stamp) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "host":
			h.Host = v
		case "uid":
			h.UID = types.UID(v)
		case "resourceVersion":
			h.ResourceVersion = v
		}
	}
	if h.UID == "" || h.ResourceVersion == "" {
		return HandWritten{}, fmt.Errorf("%q does not say the uid and resourceVersion of %s", stamp, key)
	}
	return h, nil
}

// Adoption is what an apply does with the hand-written objects its plan
// recorded (AdoptionAtApply).
type Adoption struct {
	// Delete are the recorded objects still as the plan read them (or
	// in a cluster that cannot be listed now): deleted once the intent's
	// own objects are written, with the plan's UID and resourceVersion as
	// preconditions.
	Delete []HandWritten
	// Changed are recorded objects edited since the plan (same UID,
	// another resourceVersion), as they are now: not deleted.
	Changed []HandWritten
	// Appeared are objects the intent would take over that the plan did
	// not record (written since, or replaced under the same name):
	// left alone; the next plan names them.
	Appeared []HandWritten
	// Unreadable names the clusters that could not be listed.
	Unreadable []string
}

// AdoptionAtApply compares the hand-written objects a plan recorded for
// adoption (planned) with what the clusters hold now: the apply deletes
// only what the plan named, only if unchanged since, and only while
// desired still takes it over (an object of its kind on its host in its
// cluster, with nothing the intent would lose): a record carried from an
// earlier plan whose intent no longer writes such an object deletes
// nothing.
func (e *Engine) AdoptionAtApply(ctx context.Context, desired []Desired, planned []HandWritten) Adoption {
	found, unreadable := e.handWritten(ctx, desired, true)
	takes := TakesOver(desired)
	var a Adoption
	a.Unreadable = unreadable
	now := map[string]HandWritten{}
	for _, h := range found {
		now[h.Key()] = h
	}
	recorded := map[string]bool{}
	for _, p := range planned {
		f, ok := now[p.Key()]
		switch {
		case ok && f.UID == p.UID && f.ResourceVersion != p.ResourceVersion:
			recorded[p.Key()] = true
			a.Changed = append(a.Changed, f)
		case ok && (!f.Takes || f.Why != ""):
			recorded[p.Key()] = true // not the intent's to take over (any more): left alone
		case !ok && !takes(p):
			// Not found, and not covered either: nothing to delete.
		case ok && f.UID == p.UID:
			recorded[p.Key()] = true
			a.Delete = append(a.Delete, p)
		case !ok && slices.ContainsFunc(unreadable, func(u string) bool { return strings.HasPrefix(u, p.Cluster+": ") }):
			a.Delete = append(a.Delete, p) // the preconditions decide
		}
		// Otherwise gone (nothing to delete), or another object of the
		// name: Appeared, below.
	}
	for _, h := range found {
		if h.Takes && !recorded[h.Key()] {
			a.Appeared = append(a.Appeared, h)
		}
	}
	return a
}

// TakesOver returns whether desired writes an object of a hand-written
// object's kind on its host in its cluster: only then may a record of it
// be carried forward or the object deleted.
func TakesOver(desired []Desired) func(HandWritten) bool {
	ih := hostsOfDesired(desired)
	return func(h HandWritten) bool { return ih.byKind[h.Cluster][h.Kind][h.Host] }
}

// intentHosts are, per cluster, the hosts desired objects name by kind
// (spec.hosts, spec.host) and every host they declare (those, and the
// addresses of ServiceEntry endpoints: the backends' service names).
type intentHosts struct {
	byKind   map[string]map[string]map[string]bool // cluster, kind, host
	declared map[string]map[string]bool            // cluster, host
	subsets  map[string]map[string]bool            // cluster, "<host>/<subset>" of its DestinationRules
	// content are, by "<cluster>/<kind>/<host>", the intent's objects of
	// that kind naming the host there (its parts of composed ones).
	content map[string][]map[string]any
}

func hostsOfDesired(desired []Desired) intentHosts {
	ih := intentHosts{byKind: map[string]map[string]map[string]bool{}, declared: map[string]map[string]bool{}, subsets: map[string]map[string]bool{}, content: map[string][]map[string]any{}}
	for _, d := range desired {
		if d.Manifest == nil {
			continue
		}
		hosts, declares := d.Hosts, d.Declares
		if len(d.Manifest) > 0 {
			hosts, declares = hostsOf(d.Manifest), declaresOf(d.Manifest)
		}
		if ih.byKind[d.Cluster] == nil {
			ih.byKind[d.Cluster] = map[string]map[string]bool{}
			ih.declared[d.Cluster] = map[string]bool{}
			ih.subsets[d.Cluster] = map[string]bool{}
		}
		if ih.byKind[d.Cluster][d.Kind] == nil {
			ih.byKind[d.Cluster][d.Kind] = map[string]bool{}
		}
		// A composed object's content is this intent's part of it.
		body := d.Manifest
		if len(body) == 0 {
			body = d.Part
		}
		for _, sub := range subsetsOf(body) {
			ih.subsets[d.Cluster][sub] = true
		}
		for _, h := range hosts {
			ih.byKind[d.Cluster][d.Kind][h] = true
			if len(body) > 0 {
				k := d.Cluster + "/" + d.Kind + "/" + h
				ih.content[k] = append(ih.content[k], body)
			}
		}
		for _, h := range declares {
			ih.declared[d.Cluster][h] = true
		}
	}
	return ih
}

// NamedHosts are the hosts d names (spec.hosts, spec.host): its
// manifest's, or for a composed object its part's (Hosts).
func (d Desired) NamedHosts() []string {
	if len(d.Manifest) > 0 {
		return hostsOf(d.Manifest)
	}
	return d.Hosts
}

// declaresOf lists the hosts an Istio object declares: those it names
// (hostsOf), the addresses of a ServiceEntry's endpoints (the backends'
// service names) and the hosts a VirtualService routes or mirrors to.
func declaresOf(obj map[string]any) []string {
	out := hostsOf(obj)
	spec, _ := obj["spec"].(map[string]any)
	eps, _ := spec["endpoints"].([]any)
	for _, ep := range eps {
		if m, ok := ep.(map[string]any); ok {
			if a, ok := m["address"].(string); ok && a != "" {
				out = append(out, a)
			}
		}
	}
	for _, proto := range []string{"http", "tcp", "tls"} {
		routes, _ := spec[proto].([]any)
		for _, r := range routes {
			if rm, ok := r.(map[string]any); ok {
				out = append(out, destinationsOf(rm)...)
			}
		}
	}
	return out
}

// named reports whether any desired object in cluster names host.
func (ih intentHosts) named(cluster, host string) bool {
	for _, hosts := range ih.byKind[cluster] {
		if hosts[host] {
			return true
		}
	}
	return false
}

// handWritten lists the hand-written VirtualServices and DestinationRules
// that name a host desired objects name in their cluster, each with
// whether the intent could take it over and, if not, why. fresh lists the
// clusters again instead of using this process's listing (apply: the
// plan's may be out of date). unreadable names the clusters that could
// not be listed, with the error; pull clusters are not looked at.
func (e *Engine) handWritten(ctx context.Context, desired []Desired, fresh bool) (found []HandWritten, unreadable []string) {
	ih := hostsOfDesired(desired)
	// The objects of the intent's own names are adopted in place (written
	// over), never deleted.
	own := map[string]bool{}
	for _, d := range desired {
		own[d.Cluster+"/"+d.Kind+"/"+d.Namespace+"/"+d.Name] = true
	}
	var clusters []string
	for c := range ih.byKind {
		clusters = append(clusters, c)
	}
	sort.Strings(clusters)
	var mu sync.Mutex
	perCluster(ctx, clusters, func(ctx context.Context, cluster string) ([]Entry, []*Error) {
		if _, pull, err := e.pullOf(cluster); pull || err != nil {
			return nil, nil
		}
		var items []unstructured.Unstructured
		var err error
		if fresh {
			items, err = e.listForeignRoutes(ctx, cluster)
		} else {
			items, err = e.foreignIn(ctx, cluster)
		}
		if err != nil {
			mu.Lock()
			unreadable = append(unreadable, fmt.Sprintf("%s: %v", cluster, err))
			mu.Unlock()
			return nil, nil
		}
		for _, it := range items {
			if own[cluster+"/"+it.GetKind()+"/"+it.GetNamespace()+"/"+it.GetName()] {
				continue
			}
			for _, h := range hostsOf(it.Object) {
				if !ih.named(cluster, h) {
					continue
				}
				hw := HandWritten{Cluster: cluster, Kind: it.GetKind(), Namespace: it.GetNamespace(), Name: it.GetName(), Host: h,
					UID: it.GetUID(), ResourceVersion: it.GetResourceVersion(), Takes: ih.byKind[cluster][it.GetKind()][h]}
				hw.Why = managedElsewhere(&it)
				if hw.Why == "" {
					hw.Why = whyNotAdoptable(it.Object, ih.byKind[cluster][it.GetKind()], ih.declared[cluster], ih.subsets[cluster])
				}
				if hw.Why == "" && hw.Takes {
					if lost := lostContent(it.Object, ih.content[cluster+"/"+it.GetKind()+"/"+h]); len(lost) > 0 {
						hw.Why = "it says what the intent's objects on the host would not, lost when it is deleted: " + strings.Join(lost, "; ")
					}
				}
				mu.Lock()
				found = append(found, hw)
				mu.Unlock()
				break
			}
		}
		return nil, nil
	})
	sort.Slice(found, func(i, j int) bool { return found[i].String() < found[j].String() })
	sort.Strings(unreadable)
	return found, unreadable
}

// listForeignRoutes lists a cluster's VirtualServices and DestinationRules
// without our managed-by label, uncached.
func (e *Engine) listForeignRoutes(ctx context.Context, cluster string) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	for _, gvk := range routeKinds {
		items, _, err := e.Search(ctx, cluster, gvk, metav1.ListOptions{LabelSelector: LabelManagedBy + "!=" + ManagedByValue})
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}

// managedElsewhere says why an object without our managed-by label is
// still not hand-written: another tool's managed-by label (Helm, Argo CD,
// Flux), or an owner (a Flagger canary, an Argo Rollout) that would write
// it again; empty when neither.
func managedElsewhere(u *unstructured.Unstructured) string {
	if by := u.GetLabels()[LabelManagedBy]; by != "" {
		return "it is managed by " + by + " (label " + LabelManagedBy + "), which would write it again"
	}
	if refs := u.GetOwnerReferences(); len(refs) > 0 {
		return "it is owned by " + refs[0].Kind + " " + refs[0].Name + ", which would write it again"
	}
	return ""
}

// whyNotAdoptable says why the intent cannot carry what a hand-written
// VirtualService or DestinationRule says; empty when it can. served are
// the hosts the intent's objects of the same kind name in the object's
// cluster (a hand-written object serving another host would leave that
// host without its routing), declared every host the intent declares
// there (where routes may go), subsets its DestinationRules' subsets.
func whyNotAdoptable(obj map[string]any, served, declared, subsets map[string]bool) string {
	spec, _ := obj["spec"].(map[string]any)
	undeclared := func(hosts []string) []string {
		var out []string
		seen := map[string]bool{}
		for _, h := range hosts {
			if !declared[h] && !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
		sort.Strings(out)
		return out
	}
	var why []string
	if to := stringsOf(spec["exportTo"]); len(to) > 0 && !slices.Contains(to, "*") {
		why = append(why, "it is visible only to the namespaces "+strings.Join(to, ", ")+" (exportTo), and the intent's objects to every namespace")
	}
	if ws, ok := spec["workloadSelector"].(map[string]any); ok && len(ws) > 0 {
		why = append(why, "it applies only to the workloads its workloadSelector picks, and the intent's applies to every client")
	}
	var missing []string
	for _, sub := range subsetsOf(obj) {
		if !subsets[sub] {
			_, name, _ := strings.Cut(sub, "/")
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		why = append(why, "it defines the subsets "+strings.Join(missing, ", ")+", which the intent's DestinationRule does not (routes to them would fail)")
	}
	var gateways []string
	for _, g := range stringsOf(spec["gateways"]) {
		if g != "mesh" {
			gateways = append(gateways, g)
		}
	}
	if len(gateways) > 0 {
		why = append(why, "it is bound to the gateways "+strings.Join(gateways, ", ")+", and the intent routes sidecars only")
	}
	var others []string
	for _, h := range hostsOf(obj) {
		if !served[h] && !slices.Contains(others, h) {
			others = append(others, h)
		}
	}
	sort.Strings(others)
	if len(others) > 0 {
		why = append(why, "it also serves "+strings.Join(others, ", ")+", for which the intent writes no object of its kind")
	}
	var dests, delegates []string
	for _, proto := range []string{"http", "tcp", "tls"} {
		routes, _ := spec[proto].([]any)
		for _, r := range routes {
			rm, _ := r.(map[string]any)
			if d, ok := rm["delegate"].(map[string]any); ok {
				delegates = append(delegates, fmt.Sprintf("%v/%v", d["namespace"], d["name"]))
			}
			dests = append(dests, destinationsOf(rm)...)
		}
	}
	if len(delegates) > 0 {
		why = append(why, "it delegates to the VirtualServices "+strings.Join(delegates, ", "))
	}
	if extra := undeclared(dests); len(extra) > 0 {
		why = append(why, "it routes to "+strings.Join(extra, ", ")+", which the intent does not declare")
	}
	return strings.Join(why, "; ")
}

// subsetsOf lists the subsets a DestinationRule defines, as
// "<host>/<subset>".
func subsetsOf(obj map[string]any) []string {
	spec, _ := obj["spec"].(map[string]any)
	host, _ := spec["host"].(string)
	subs, _ := spec["subsets"].([]any)
	var out []string
	for _, x := range subs {
		if m, ok := x.(map[string]any); ok {
			if n, ok := m["name"].(string); ok && n != "" {
				out = append(out, host+"/"+n)
			}
		}
	}
	return out
}

// destinationsOf lists the hosts one route of a VirtualService sends or
// mirrors requests to.
func destinationsOf(route map[string]any) []string {
	var out []string
	host := func(v any) {
		if m, ok := v.(map[string]any); ok {
			if h, ok := m["host"].(string); ok && h != "" {
				out = append(out, h)
			}
		}
	}
	routes, _ := route["route"].([]any)
	for _, r := range routes {
		if m, ok := r.(map[string]any); ok {
			host(m["destination"])
		}
	}
	host(route["mirror"])
	mirrors, _ := route["mirrors"].([]any)
	for _, m := range mirrors {
		if mm, ok := m.(map[string]any); ok {
			host(mm["destination"])
		}
	}
	return out
}

func stringsOf(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// RoutesToAdopt sorts the hand-written VirtualServices and
// DestinationRules on the hosts of desired that the intent writes an
// object of the same kind for into those it takes over (adopt) and those
// it cannot (refuse, each with Why). fresh: as handWritten. unreadable
// names the clusters that could not be looked at.
func (e *Engine) RoutesToAdopt(ctx context.Context, desired []Desired, fresh bool) (adopt, refuse []HandWritten, unreadable []string) {
	found, unreadable := e.handWritten(ctx, desired, fresh)
	for _, h := range found {
		switch {
		case !h.Takes:
		case h.Why != "":
			refuse = append(refuse, h)
		default:
			adopt = append(adopt, h)
		}
	}
	return adopt, refuse, unreadable
}

// DeleteAdopted deletes the hand-written objects an apply of owner took
// over, once owner's own objects are written: each only if it is still the
// object that was read (the UID and resourceVersion preconditions), so
// that an object replaced or edited since is left alone and named. One
// already gone is no error.
func (e *Engine) DeleteAdopted(ctx context.Context, owner Owner, adopted []HandWritten) Errors {
	var clusters []string
	for _, h := range adopted {
		clusters = append(clusters, h.Cluster)
	}
	slices.Sort(clusters)
	clusters = slices.Compact(clusters) // each cluster once, whatever the order of adopted
	_, errs := perCluster(ctx, clusters, func(ctx context.Context, cluster string) ([]Entry, []*Error) {
		var out []*Error
		for _, h := range adopted {
			if h.Cluster != cluster {
				continue
			}
			en := Entry{Cluster: h.Cluster, APIVersion: "networking.istio.io/v1", Kind: h.Kind, Namespace: h.Namespace, Name: h.Name}
			ri, err := e.resourceIn(cluster, routeKindOf(h.Kind))
			if err == nil {
				uid, rv := h.UID, h.ResourceVersion
				err = ri.Namespace(h.Namespace).Delete(ctx, h.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
			}
			switch {
			case err == nil:
				logEntry(ctx, "adopted: the hand-written object is deleted, this intent's own serves its host", owner, en)
			case apierrors.IsNotFound(err):
			case apierrors.IsConflict(err):
				out = append(out, &Error{Cluster: cluster, Object: en.String(), Err: err,
					Summary: "Adopting " + en.String(),
					Detail: fmt.Sprintf("The hand-written %s %s/%s in cluster %s changed after it was read (another UID or resourceVersion), so it was not deleted; %s's own objects are written. "+
						"Run terraform plan again: it shows whether the object as it is now can be adopted.", h.Kind, h.Namespace, h.Name, cluster, owner)})
			default:
				oe := objectError(en, "Deleting the adopted", err)
				out = append(out, oe)
			}
		}
		return nil, out
	})
	e.renderHints(errs)
	e.foreign.forget(clusters)
	return errs
}

// routeKindOf is the GroupVersionKind of a route kind by its Kind.
func routeKindOf(kind string) schema.GroupVersionKind {
	for _, k := range routeKinds {
		if k.Kind == kind {
			return k
		}
	}
	return schema.GroupVersionKind{Group: "networking.istio.io", Version: "v1", Kind: kind}
}

// forget drops the cached listings of clusters.
func (f *foreignRoutes) forget(clusters []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range clusters {
		delete(f.m, c)
	}
}

// HandWrittenList joins hand-written objects as "<object>: <why>" (the
// reason left out when empty), one per line.
func HandWrittenList(hs []HandWritten) string {
	var out []string
	for _, h := range hs {
		s := "- " + h.String()
		if h.Why != "" {
			s += ": " + h.Why
		}
		out = append(out, s)
	}
	return strings.Join(out, "\n")
}

// PlainObjects lists, as "<object> in cluster <c>", the desired objects
// that exist without our managed-by label: the hand-written objects of the
// names the intent writes, which adopt_existing rewrites in place. Pull
// clusters are not asked; a cluster that cannot be read is an error.
func (e *Engine) PlainObjects(ctx context.Context, desired []Desired) ([]string, error) {
	var out []string
	for _, d := range desired {
		if _, pull, err := e.pullOf(d.Cluster); pull || err != nil {
			continue
		}
		live, err := e.Get(ctx, d.Entry)
		if err != nil {
			return nil, err
		}
		if live != nil && live.GetLabels()[LabelManagedBy] != ManagedByValue {
			out = append(out, d.Entry.String())
		}
	}
	sort.Strings(out)
	return out, nil
}
