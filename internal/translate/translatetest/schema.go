package translatetest

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/modfile"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// Offline validation of translator output against Istio's CRD schemas
// (from the istio.io/api module the provider is built with): the OpenAPI
// schema, unknown fields (which a server would prune silently) and the CEL
// rules, as an API server applies them. The acceptance tests check the same
// against a real API server.

type crdSchema struct {
	structural *structuralschema.Structural
	validator  validation.SchemaValidator
	cel        *cel.Validator
}

var (
	schemasOnce sync.Once
	schemas     map[string]*crdSchema // by "apiVersion/kind"
	schemasErr  error
)

func istioSchemas(t testing.TB) map[string]*crdSchema {
	t.Helper()
	schemasOnce.Do(func() { schemas, schemasErr = loadIstioSchemas() })
	if schemasErr != nil {
		t.Fatalf("loading Istio's CRD schemas: %v", schemasErr)
	}
	return schemas
}

func loadIstioSchemas() (map[string]*crdSchema, error) {
	dir, err := istioAPIDir()
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(filepath.Join(dir, "kubernetes", "customresourcedefinitions.gen.yaml"))
	if err != nil {
		return nil, err
	}
	result := map[string]*crdSchema{}
	for _, doc := range bytes.Split(raw, []byte("\n---\n")) {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(doc, &crd); err != nil || crd.Spec.Names.Kind == "" {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			var internal apiextensions.JSONSchemaProps
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
				return nil, err
			}
			ss, err := structuralschema.NewStructural(&internal)
			if err != nil {
				return nil, err
			}
			val, _, err := validation.NewSchemaValidator(&internal)
			if err != nil {
				return nil, err
			}
			result[crd.Spec.Group+"/"+v.Name+"/"+crd.Spec.Names.Kind] = &crdSchema{structural: ss, validator: val, cel: cel.NewValidator(ss, true, 1_000_000)}
		}
	}
	if len(result) == 0 {
		return nil, fmt.Errorf("no CRD schemas found")
	}
	return result, nil
}

// CheckSchema validates one object as an API server would: its metadata
// (name, namespace, labels and annotations, for every kind), then, for
// Istio's kinds, the CRD's structure, unknown fields and CEL rules.
// Objects whose metadata still carries an Unknown placeholder (known only
// after apply) skip the metadata check.
func CheckSchema(t testing.TB, o translate.Object) error {
	if err := checkMetadata(o); err != nil {
		return err
	}
	rendered, err := o.Manifest()
	if err != nil {
		return err
	}
	// As the API server decodes it: integers as int64, not float64.
	raw, err := utiljson.Marshal(rendered)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := utiljson.Unmarshal(raw, &m); err != nil {
		return err
	}
	key := fmt.Sprint(m["apiVersion"]) + "/" + fmt.Sprint(m["kind"])
	s, ok := istioSchemas(t)[key]
	if !ok {
		if strings.Contains(key, "istio.io") {
			return fmt.Errorf("no schema for %s", key)
		}
		return nil
	}
	obj := runtime.DeepCopyJSON(m)
	if unknown := structuralpruning.PruneWithOptions(obj, s.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}); len(unknown) > 0 {
		return fmt.Errorf("%s: fields unknown to the schema: %v", o.Key(), unknown)
	}
	if errs := validation.ValidateCustomResource(nil, m, s.validator); len(errs) > 0 {
		return fmt.Errorf("%s: %v", o.Key(), errs.ToAggregate())
	}
	if errs, _ := s.cel.Validate(context.Background(), nil, s.structural, m, nil, 1_000_000); len(errs) > 0 {
		return fmt.Errorf("%s: %v", o.Key(), errs.ToAggregate())
	}
	return nil
}

// checkMetadata applies the API server's own ObjectMeta validation: a
// DNS-1123 subdomain name, a namespace, qualified label keys and values,
// annotation keys and their total size.
func checkMetadata(o translate.Object) error {
	m := o.Resource
	for _, s := range append([]string{m.GetName(), m.GetNamespace()}, slices.Collect(maps.Values(m.GetLabels()))...) {
		if translate.IsUnknown(s) {
			return nil
		}
	}
	if errs := apivalidation.ValidateObjectMetaAccessor(m, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata")); len(errs) > 0 {
		return fmt.Errorf("%s: %v", o.Key(), errs.ToAggregate())
	}
	return nil
}

// istioAPIDir is the module cache's copy of the istio.io/api that the
// provider's go.mod requires, found where GOMODCACHE, GOPATH or their
// defaults put it; only when it is elsewhere (a GOMODCACHE set with go env
// -w) is the go command asked. Asking it every time would make every test
// run a child process, which tools/mutate's result cache must then treat
// as reading the whole tree.
func istioAPIDir() (string, error) {
	const path = "istio.io/api"
	if version, ok := requiredVersion(path); ok {
		for _, cache := range moduleCaches() {
			dir := filepath.Join(cache, path+"@"+version)
			if _, err := os.Stat(dir); err == nil {
				return dir, nil
			}
		}
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", path).Output()
	if err != nil {
		return "", fmt.Errorf("finding the istio.io/api module (needs the go command): %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// requiredVersion is the version of module path that the go.mod above the
// working directory requires (a test runs in its package's directory),
// unless a replace directive points elsewhere.
func requiredVersion(path string) (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			f, err := modfile.ParseLax("go.mod", b, nil)
			if err != nil {
				return "", false
			}
			for _, r := range f.Replace {
				if r.Old.Path == path {
					return "", false
				}
			}
			for _, r := range f.Require {
				if r.Mod.Path == path {
					return r.Mod.Version, true
				}
			}
			return "", false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// moduleCaches are the places the module cache may be, most specific first.
func moduleCaches() []string {
	var dirs []string
	if d := os.Getenv("GOMODCACHE"); d != "" {
		dirs = append(dirs, d)
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if home, err := os.UserHomeDir(); err == nil {
			gopath = filepath.Join(home, "go")
		}
	}
	for _, p := range filepath.SplitList(gopath) {
		dirs = append(dirs, filepath.Join(p, "pkg", "mod"))
	}
	return dirs
}
