package provider

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
	"github.com/mesh-intent/terraform-provider-mesh/internal/shareddata"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// A virtual destination leaves a record of its intent (a ConfigMap named
// like its other objects) in every cluster where it has objects. Traffic
// and access policies need a virtual destination's backends. While
// planning they find them among the virtual destinations planned in the
// same run, without contacting a cluster; but when Terraform applies a new
// policy it plans that policy once more, and an unchanged virtual
// destination is not planned again then. The record answers that case (and
// a virtual destination managed in another Terraform state).

// lookupVirtualDestination finds the virtual destination with a hostname:
// first among those planned in this run, then in the records in the
// clusters' records namespace, and nowhere else: a ConfigMap with record
// labels elsewhere is anyone's, and could redirect a policy. Such records,
// and records that name no instance, are returned in ignored, for a
// warning.
//
// Every record of the hostname is read, in every registered cluster, and
// they must agree: one writer (instance ID) and one content. Records of
// two instances are a *recordsConflict (two virtual destinations serve
// the hostname); records of one instance that differ are one too (an
// apply of it that did not finish). Neither is resolved by which cluster
// sorts first.
//
// errPendingDestination means the virtual destination is planned in this
// run but its configuration is known only after apply.
func lookupVirtualDestination(ctx context.Context, data *providerData, hostname string) (in virtualdestination.Intent, found bool, ignored []string, err error) {
	if data == nil {
		return virtualdestination.Intent{}, false, nil, nil
	}
	if in, pending, ok := data.Destinations.Lookup(hostname); ok {
		if pending {
			return in, false, nil, errPendingDestination
		}
		return in, true, nil, nil
	}
	if data.Engine == nil || data.Registry == nil {
		return virtualdestination.Intent{}, false, nil, nil
	}
	records, elsewhere, errs := data.records().Lookup(ctx, data.Registry.Names(), hostname, true)
	for _, r := range elsewhere {
		ignored = append(ignored, r.Where())
	}
	trusted, unnamed := splitRecords(records)
	for _, r := range unnamed {
		ignored = append(ignored, r.Where()+" (it names no instance: label "+engine.LabelOwnerID+" is missing)")
	}
	in, found, err = resolveRecords(hostname, trusted)
	if err != nil {
		return in, false, ignored, err
	}
	if !found && len(errs) > 0 {
		// A cluster that does not answer is not a reason to fail a
		// policy whose destination the others agree on (its owner's own
		// plan checks the hostname in every cluster); but nothing found
		// may mean its records are there.
		return virtualdestination.Intent{}, false, ignored, fmt.Errorf("some clusters could not be searched: %v", errs)
	}
	return in, found, ignored, nil
}

// splitRecords separates records that name the instance that wrote them
// from those that do not: the provider always writes the instance ID, so a
// record without one was not written by an apply, and is not trusted.
func splitRecords(records []shareddata.Record) (trusted, unnamed []shareddata.Record) {
	for _, r := range records {
		if r.OwnerID == "" {
			unnamed = append(unnamed, r)
		} else {
			trusted = append(trusted, r)
		}
	}
	return trusted, unnamed
}

// recordsConflict says that the records of a hostname do not agree: they
// were written by several instances, or by one with different contents.
type recordsConflict struct {
	hostname string
	// writers is set when several instances wrote records; else variants
	// lists, per content, where it was found.
	writers  []recordWriter
	variants [][]string
}

// recordWriter is one instance that wrote records of a hostname.
type recordWriter struct {
	Name, ID string
	Clusters []string
}

func (w recordWriter) String() string {
	return fmt.Sprintf("virtual destination %q (instance %s, records in cluster %s)", w.Name, w.ID, strings.Join(w.Clusters, ", "))
}

func (c *recordsConflict) Error() string {
	if len(c.writers) > 0 {
		var ws []string
		for _, w := range c.writers {
			ws = append(ws, w.String())
		}
		return fmt.Sprintf("hostname %s is served by %d virtual destinations, each with its own records: %s. "+
			"Istio would keep one of them, and policies would resolve the hostname to either one. "+
			"Give one of them another hostname, or remove one from its Terraform state (and, to manage it elsewhere, import it there)",
			c.hostname, len(c.writers), strings.Join(ws, "; "))
	}
	var vs []string
	for i, v := range c.variants {
		vs = append(vs, fmt.Sprintf("version %d in %s", i+1, strings.Join(v, ", ")))
	}
	return fmt.Sprintf("the records of hostname %s do not agree (%s): an apply of its virtual destination did not finish. "+
		"Apply the state that owns it again so that every record is rewritten, then plan this again", c.hostname, strings.Join(vs, "; "))
}

// writersOf groups records by the instance that wrote them, in order of
// instance ID.
func writersOf(records []shareddata.Record) []recordWriter {
	byID := map[string]*recordWriter{}
	var ids []string
	for _, r := range records {
		w := byID[r.OwnerID]
		if w == nil {
			w = &recordWriter{Name: r.OwnerName, ID: r.OwnerID}
			byID[r.OwnerID] = w
			ids = append(ids, r.OwnerID)
		}
		w.Clusters = append(w.Clusters, r.Cluster)
	}
	sort.Strings(ids)
	out := make([]recordWriter, 0, len(ids))
	for _, id := range ids {
		out = append(out, *byID[id])
	}
	return out
}

// resolveRecords reads the virtual destination of hostname from its
// records, which must all come from one instance and say one thing.
func resolveRecords(hostname string, records []shareddata.Record) (virtualdestination.Intent, bool, error) {
	if len(records) == 0 {
		return virtualdestination.Intent{}, false, nil
	}
	if ws := writersOf(records); len(ws) > 1 {
		return virtualdestination.Intent{}, false, &recordsConflict{hostname: hostname, writers: ws}
	}
	// Records agree when they say the same in the same format (a record
	// of an earlier build, without a format, and this build's rewrite of
	// it do not differ in what they say).
	byContent := map[string][]string{}
	var contents []string
	var formats []string
	var extras [][]string
	for _, r := range records {
		k := recordFormatOf(r) + "\x00" + strings.Join(r.Extra, ",") + "\x00" + r.Intent
		if byContent[k] == nil {
			contents = append(contents, k)
			formats = append(formats, r.Format)
			extras = append(extras, r.Extra)
		}
		byContent[k] = append(byContent[k], r.Where())
	}
	if len(contents) > 1 {
		c := &recordsConflict{hostname: hostname}
		for _, k := range contents {
			c.variants = append(c.variants, byContent[k])
		}
		return virtualdestination.Intent{}, false, c
	}
	raw := strings.SplitN(contents[0], "\x00", 3)[2]
	in, err := virtualdestination.DecodeRecord(formats[0], raw, extras[0])
	var newer *virtualdestination.RecordFormatError
	if errors.As(err, &newer) {
		return virtualdestination.Intent{}, false, fmt.Errorf("the record of %s (%s) cannot be read: %v. Nothing is resolved from it", hostname, records[0].Where(), err)
	}
	if err != nil {
		return in, false, fmt.Errorf("the record of %s (%s) cannot be read: %v; whoever wrote it did not use this provider. Delete it, and apply the virtual destination's state again", hostname, records[0].Where(), err)
	}
	if in.Hostname != hostname {
		return virtualdestination.Intent{}, false, fmt.Errorf("the record %s is labelled for hostname %s but holds the intent of %q; whoever wrote it did not use this provider. Delete it, and apply the virtual destination's state again", records[0].Where(), hostname, in.Hostname)
	}
	return in, true, nil
}

// recordFormatOf is the format version a record is in: "1" for records
// of builds before record formats.
func recordFormatOf(r shareddata.Record) string {
	if r.Format == "" {
		return "1"
	}
	return r.Format
}

// recordsConflictDiagnostics turns a recordsConflict from a lookup into
// an error at the attribute naming the hostname; ok reports whether err
// was one.
func recordsConflictDiagnostics(at path.Path, err error) (diag.Diagnostics, bool) {
	var diags diag.Diagnostics
	var c *recordsConflict
	if !errors.As(err, &c) {
		return diags, false
	}
	summary := "Hostname served by more than one virtual destination"
	if len(c.writers) == 0 {
		summary = "Records of the virtual destination disagree"
	}
	addAttrError(&diags, at, summary, upperFirst(c.Error())+".")
	return diags, true
}

// warnIgnoredRecords warns about records of hostname found outside the
// records namespace.
func warnIgnoredRecords(diags *diag.Diagnostics, at path.Path, hostname, recordsNS string, ignored []string) {
	if len(ignored) == 0 {
		return
	}
	sort.Strings(ignored)
	diags.AddAttributeWarning(sourcePath(at), "Record outside the records namespace ignored",
		fmt.Sprintf("ConfigMaps that look like the record of virtual destination %q were found outside the records namespace %q and were ignored: %s. "+
			"Records are read only from %q; whoever created these may have meant to redirect this policy. Delete them, or find out who wrote them.",
			hostname, recordsNS, strings.Join(ignored, ", "), recordsNS))
}

var errPendingDestination = errors.New("the virtual destination's configuration is known only after apply")

// upperFirst starts a message with a capital letter.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// checkHostnameRecords is the plan-time check of a virtual destination
// against the records of its hostname in every registered cluster: a
// record written by another instance means another virtual destination
// (in another state, or in this one under another address) serves the
// hostname, and is an error naming both. Records of this resource's own
// instance (planID, or priorID: the instance a replacement replaces) are
// its own, or leftovers it replaces. Terraform plans a replacement twice,
// the second time as a create without prior state, so the prior IDs seen
// are remembered per hostname for the run (runstate.DestinationIndex.NotePrior). Clusters that cannot be searched are
// a warning: the check is made again when the apply plans once more.
func checkHostnameRecords(ctx context.Context, data *providerData, at path.Path, name, hostname, planID, priorID string) diag.Diagnostics {
	var diags diag.Diagnostics
	if data == nil || data.Engine == nil || data.Registry == nil || data.RegistryUnknown || hostname == "" {
		return diags
	}
	records, _, errs := data.records().Lookup(ctx, data.Registry.Names(), hostname, false)
	var unsearched []string
	for _, e := range errs {
		if !errors.Is(e, kubeclient.ErrNotRegistered) { // a connection known only after apply
			unsearched = append(unsearched, e.Error())
		}
	}
	if len(unsearched) > 0 {
		diags.AddAttributeWarning(sourcePath(at), "Hostname not checked in every cluster",
			fmt.Sprintf("Whether another virtual destination already serves hostname %q could not be checked in these clusters: %s. "+
				"The check is made again when the apply plans this resource; make sure the clusters answer.", hostname, strings.Join(unsearched, "; ")))
	}
	if priorID != "" && data.Destinations != nil {
		data.Destinations.NotePrior(hostname, priorID)
	}
	trusted, _ := splitRecords(records)
	var own, others []shareddata.Record
	for _, r := range trusted {
		if r.OwnerID == planID && planID != "" || r.OwnerID == priorID && priorID != "" || data.Destinations != nil && data.Destinations.PriorOf(hostname, r.OwnerID) {
			own = append(own, r)
		} else {
			others = append(others, r)
		}
	}
	if len(others) == 0 {
		return diags
	}
	self := fmt.Sprintf("this virtual destination %q (a new instance, without records yet)", name)
	if ws := writersOf(own); len(ws) > 0 {
		var parts []string
		for _, w := range ws {
			parts = append(parts, w.String())
		}
		self = "this " + strings.Join(parts, " and ")
	} else if planID != "" || priorID != "" {
		id := planID
		if id == "" {
			id = priorID
		}
		self = fmt.Sprintf("this virtual destination %q (instance %s, no records yet)", name, id)
	}
	var theirs []string
	for _, w := range writersOf(others) {
		theirs = append(theirs, w.String())
	}
	addAttrError(&diags, at, "Hostname served by another virtual destination",
		fmt.Sprintf("Hostname %q is already served by %s; %s would serve it too. Two virtual destinations with one hostname overwrite each other in Istio, "+
			"and policies on the hostname would resolve it to either one. Give one of them another hostname; or, if both are meant to be one virtual destination, "+
			"keep it in one state only: destroy it in the other, or drop it from the other state (a `removed` block with `destroy = false`) and import it into the state that should manage it (`terraform import mesh_virtual_destination.<address> <name>`).",
			hostname, strings.Join(theirs, " and "), self))
	return diags
}

// warnRecordsMove warns when a virtual destination's records are in
// another namespace than the records namespace: records_namespace was
// changed, and this apply writes them in the new one and deletes the old
// ones (its own only: pruning is pinned to its instance ID).
func warnRecordsMove(at path.Path, recordsNS string, prior []engine.Entry) diag.Diagnostics {
	var diags diag.Diagnostics
	var moved []string
	old := map[string]bool{}
	var olds []string
	for _, e := range prior {
		if e.Kind != "ConfigMap" || e.Namespace == recordsNS {
			continue
		}
		moved = append(moved, e.Namespace+"/"+e.Name+" in cluster "+e.Cluster)
		if !old[e.Namespace] {
			old[e.Namespace] = true
			olds = append(olds, e.Namespace)
		}
	}
	if len(moved) == 0 {
		return diags
	}
	sort.Strings(olds)
	sort.Strings(moved)
	diags.AddAttributeWarning(sourcePath(at), "Records move to the new records namespace",
		fmt.Sprintf("The provider's records_namespace is now %q, and this virtual destination's records are in namespace %s (%s). "+
			"The apply writes its records in %q and deletes the old ones. Policies in other states read records from their provider's records_namespace only: "+
			"set it to %q there too, or they no longer find this virtual destination.",
			recordsNS, strings.Join(quoteEach(olds), ", "), strings.Join(moved, ", "), recordsNS, recordsNS))
	return diags
}

func quoteEach(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
