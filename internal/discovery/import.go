package discovery

import (
	"context"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
)

// SearchInstances lists, in every one of clusters, the instances of the
// intent of kind named name (by instance ID, with their kept
// configuration), and the objects with its names that this provider did
// not write: those named plainName(name), when plainName is not nil (the
// name hand-written objects of the intent would have). unreachable names
// the clusters that could not be searched, with the error.
func SearchInstances(ctx context.Context, eng *engine.Engine, clusters []string, kind intentkind.Kind, plainName func(name string) string, name string) (found map[string]Instance, plain, unreachable []string) {
	found = map[string]Instance{}
	owner := engine.Owner{Kind: kind.Owner, Name: name} // no ID: every instance
	if kind.Composed {
		owner.Composition = &engine.Composition{}
	}
	selector, contributionKey := owner.Selector(), owner.ContributionKey()
	for _, cluster := range clusters {
		for _, k := range kind.Writes {
			items, installed, err := eng.Search(ctx, cluster, k, metav1.ListOptions{LabelSelector: selector})
			if err != nil {
				unreachable = append(unreachable, fmt.Sprintf("%s: %v", cluster, err))
				break
			}
			if !installed {
				continue
			}
			for _, item := range items {
				addObject(found, kind, k, contributionKey, cluster, item)
			}
			if plainName == nil || k.Kind == "ConfigMap" {
				continue
			}
			all, _, err := eng.Search(ctx, cluster, k, metav1.ListOptions{FieldSelector: "metadata.name=" + plainName(name)})
			if err != nil {
				unreachable = append(unreachable, fmt.Sprintf("%s: %v", cluster, err))
				break
			}
			for _, item := range all {
				if item.GetLabels()[engine.LabelManagedBy] != engine.ManagedByValue {
					plain = append(plain, fmt.Sprintf("%s %s/%s in %s", k.Kind, item.GetNamespace(), item.GetName(), cluster))
				}
			}
		}
	}
	return found, plain, unreachable
}

// addObject records item, an object of Kubernetes kind k in cluster, under
// the instance of the intent it belongs to, with the configuration it
// keeps: a composed kind's in its contribution (the annotation and label
// contributionKey), another's in ConfigAnnotation on ConfigKind objects.
func addObject(found map[string]Instance, kind intentkind.Kind, k schema.GroupVersionKind, contributionKey, cluster string, item unstructured.Unstructured) {
	labels, annotations := item.GetLabels(), item.GetAnnotations()
	id, cfg := labels[engine.LabelOwnerID], ""
	if kind.Composed {
		id = labels[contributionKey]
		if id == "true" { // a contribution label without an ID (Owner.idValue)
			id = NoInstanceID
		}
		cfg, _ = trafficpolicy.KeptConfig(annotations[contributionKey])
	} else if k.Kind == kind.ConfigKind {
		cfg = annotations[ConfigAnnotation]
	}
	where := fmt.Sprintf("%s %s/%s in %s", k.Kind, item.GetNamespace(), item.GetName(), cluster)
	f := found[id]
	f.Objects = append(f.Objects, where)
	if cfg != "" {
		if f.Configs == nil {
			f.Configs = map[string][]string{}
		}
		f.Configs[cfg] = append(f.Configs[cfg], where)
	}
	found[id] = f
}

// Instance is what the clusters hold of one instance of an intent: the
// configurations it kept and its objects, each named as
// "<Kind> <namespace>/<name> in <cluster>".
type Instance struct {
	// Configs maps each kept configuration found to the objects keeping
	// it; Objects lists every object of the instance.
	Configs map[string][]string
	Objects []string
}

// NoInstanceID is how SearchInstances names objects that carry no
// instance ID: the owner-id label missing, or a contribution label of
// "true".
const NoInstanceID = ""

// ChooseImport decides what an import of kind name takes from the
// instances found: exactly one instance, with an ID, keeping one
// configuration. Anything else is refused (summary and detail say why and
// what to do), never resolved by which object was found first: an instance
// without an ID would become an owner of every instance's objects of that
// name (a selector without an ID matches them all), and one of several
// instances or configurations is a guess.
func ChooseImport(kind, name string, found map[string]Instance) (id, config, summary, detail string) {
	if f, ok := found[NoInstanceID]; ok {
		return "", "", "Objects without an instance ID",
			fmt.Sprintf("%s %q has objects that carry the provider's labels but no instance ID (label %s): %s. This provider always writes one, so they were written or edited by someone else, "+
				"and importing them would make the resource the owner of every instance's objects of that name. They are not imported. "+
				"Delete them (or give them back their %s label, from the state that owns them: its next apply writes it) and import again.",
				kind, name, engine.LabelOwnerID, strings.Join(f.Objects, ", "), engine.LabelOwnerID)
	}
	if len(found) > 1 {
		var ids []string
		for id, f := range found {
			ids = append(ids, fmt.Sprintf("instance %s (%s)", id, strings.Join(f.Objects, ", ")))
		}
		sort.Strings(ids)
		return "", "", "More than one instance to import",
			fmt.Sprintf("Several %s intents named %q, from different Terraform states or replaced resources, have objects in the clusters: %s. "+
				"Import one by deleting the other's objects, or rename one in its own state first.", kind, name, strings.Join(ids, "; "))
	}
	var f Instance
	for id, f = range found {
	}
	switch len(f.Configs) {
	case 0:
		return "", "", "Nothing to rebuild the configuration from",
			fmt.Sprintf("%s %q (instance %s) has objects (%s), but none keeps its configuration: they were written by an earlier provider version, which did not keep it. "+
				"The next change applied to the resource from the state that owns it keeps it. If that state is lost, delete these objects and apply the configuration again.", kind, name, id, strings.Join(f.Objects, ", "))
	case 1:
		for config = range f.Configs {
		}
		return id, config, "", ""
	}
	var variants []string
	for _, where := range f.Configs {
		variants = append(variants, strings.Join(where, ", "))
	}
	sort.Strings(variants)
	return "", "", "Kept configurations disagree",
		fmt.Sprintf("The objects of %s %q (instance %s) keep %d different configurations, one per group: %s. An apply of it did not finish, or someone edited them, and which is right cannot be told. "+
			"Apply the state that owns it again (its apply rewrites every one), or delete the objects that are wrong, and import again.", kind, name, id, len(f.Configs), strings.Join(variants, "; "))
}

// PickInstance narrows the instances an import found to the one the
// identity names, when it names one; summary and detail say why not when
// that instance is not among them. Objects without an instance ID stay
// beside it, so that ChooseImport refuses them as an import by name does:
// the selector of the instance named would not tell them apart either.
func PickInstance(kind, name, instance string, found map[string]Instance) (map[string]Instance, string, string) {
	if instance == "" || len(found) == 0 {
		return found, "", ""
	}
	if f, ok := found[instance]; ok {
		picked := map[string]Instance{instance: f}
		if none, ok := found[NoInstanceID]; ok {
			picked[NoInstanceID] = none
		}
		return picked, "", ""
	}
	var ids []string
	for id := range found {
		if id == NoInstanceID {
			id = "(none)"
		}
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return nil, "No such instance to import",
		fmt.Sprintf("The identity names instance %q of %s %q, but the registered clusters hold its objects for instance(s) %s only. "+
			"Give one of those as the identity's id, or leave the id out to import the one instance there is.", instance, kind, name, strings.Join(ids, ", "))
}
