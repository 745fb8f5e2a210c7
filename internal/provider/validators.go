package provider

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// durationValidator accepts Go durations ("500ms", "2s", "1m30s") as Istio
// takes them: at least 1ms, whole milliseconds. It is the translator's own
// check (translate.CheckDuration), run by terraform validate.
type durationValidator struct{}

func (durationValidator) Description(context.Context) string {
	return "must be a duration such as 500ms, 2s or 1m, at least 1ms, in whole milliseconds"
}
func (v durationValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (durationValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	var terr *translate.Error
	if err := translate.CheckDuration(nil, req.ConfigValue.ValueString()); errors.As(err, &terr) {
		addAttrError(&resp.Diagnostics, req.Path, terr.Summary, terr.Detail)
	}
}

// urlValidator accepts absolute URLs with one of the given schemes.
type urlValidator struct{ schemes []string }

func (v urlValidator) Description(context.Context) string {
	return "must be an absolute URL (" + strings.Join(v.schemes, ", ") + ")"
}
func (v urlValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (v urlValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	u, err := url.Parse(req.ConfigValue.ValueString())
	if err == nil && u.Host != "" {
		for _, s := range v.schemes {
			if u.Scheme == s {
				return
			}
		}
	}
	// The value is not echoed: a URL may carry credentials (a proxy's
	// user:password@).
	addAttrError(&resp.Diagnostics, req.Path, "Invalid URL",
		fmt.Sprintf("The value is not an absolute URL with scheme %s, e.g. %s://example.com:6443.", strings.Join(v.schemes, " or "), v.schemes[0]))
}

// pemValidator accepts PEM data; the value is never echoed back, since it
// may be a key.
type pemValidator struct{}

func (pemValidator) Description(context.Context) string { return "must be PEM-encoded" }
func (v pemValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}
func (pemValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if block, _ := pem.Decode([]byte(req.ConfigValue.ValueString())); block == nil {
		addAttrError(&resp.Diagnostics, req.Path, "Invalid PEM data",
			"The value is not PEM-encoded (it must contain a -----BEGIN ...----- block). Pass the file's contents, e.g. file(\"ca.crt\"), or base64decode() a kubeconfig's *-data field.")
	}
}

// trustDomainValidator accepts SPIFFE trust domain names.
type trustDomainValidator struct{}

func (trustDomainValidator) Description(context.Context) string {
	return "must be a SPIFFE trust domain: lowercase letters, digits, dots, dashes and underscores"
}
func (v trustDomainValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}
func (trustDomainValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	td := req.ConfigValue.ValueString()
	ok := td != "" && len(td) <= 255
	for _, r := range td {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			ok = false
		}
	}
	if !ok {
		addAttrError(&resp.Diagnostics, req.Path, "Invalid trust domain",
			fmt.Sprintf("%q is not a SPIFFE trust domain. Use lowercase letters, digits, '.', '-' and '_' only, without spiffe:// or a path, e.g. east.mesh.", td))
	}
}

// labelsValidator checks Kubernetes label syntax of keys and values.
type labelsValidator struct{}

func (labelsValidator) Description(context.Context) string {
	return "keys and values must be valid Kubernetes labels"
}
func (v labelsValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (labelsValidator) ValidateMap(_ context.Context, req validator.MapRequest, resp *validator.MapResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	for k, v := range req.ConfigValue.Elements() {
		at := req.Path.AtMapKey(k)
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			addAttrError(&resp.Diagnostics, at, "Invalid label key",
				fmt.Sprintf("Label key %q is not valid: %s.", k, strings.Join(errs, "; ")))
		}
		s, ok := v.(types.String)
		if !ok || s.IsUnknown() || s.IsNull() {
			continue
		}
		if errs := validation.IsValidLabelValue(s.ValueString()); len(errs) > 0 {
			addAttrError(&resp.Diagnostics, at, "Invalid label value",
				fmt.Sprintf("Label value %q is not valid: %s.", s.ValueString(), strings.Join(errs, "; ")))
		}
	}
}

// dnsLabelValidator accepts RFC 1123 labels: names that become parts of
// Kubernetes object names.
type dnsLabelValidator struct{}

func (dnsLabelValidator) Description(context.Context) string {
	return "must be a DNS label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit"
}
func (v dnsLabelValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (v dnsLabelValidator) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if errs := validation.IsDNS1123Label(req.ConfigValue.ValueString()); len(errs) > 0 {
		addAttrError(&resp.Diagnostics, req.Path, "Invalid name",
			fmt.Sprintf("%q %s.", req.ConfigValue.ValueString(), v.Description(ctx)))
	}
}

// addAttrError adds an error tied to an attribute whose text also names the
// attribute, so it reads well in CI logs where the source snippet is cut.
// The diagnostic's own path is sourcePath(p), the part of p that Terraform
// can show in the configuration.
func addAttrError(d *diag.Diagnostics, p path.Path, summary, detail string) {
	d.AddAttributeError(sourcePath(p), summary, "Attribute "+p.String()+": "+detail)
}

// addAttrWarning is addAttrError for a warning.
func addAttrWarning(d *diag.Diagnostics, p path.Path, summary, detail string) {
	d.AddAttributeWarning(sourcePath(p), summary, "Attribute "+p.String()+": "+detail)
}

// sourcePath is the longest part of p whose source Terraform (and
// OpenTofu) can point at: a top-level attribute, or one element of it
// (a list index or a map key). They find the source of an attribute path
// by walking blocks; this provider's schemas have none, only nested
// attributes, which are expressions to Terraform: for a path that goes
// further into one (ports[0].number, fault.abort.percent) they point at
// the whole resource block, not the attribute's line. Cut to its element
// (ports[0]) or attribute (fault), the diagnostic points at the line that
// holds the mistake; its text names the full path.
func sourcePath(p path.Path) path.Path {
	steps := p.Steps()
	keep := 1
	if len(steps) > 1 {
		switch steps[1].(type) {
		case path.PathStepElementKeyInt, path.PathStepElementKeyString:
			keep = 2
		}
	}
	if len(steps) <= keep {
		return p
	}
	out := path.Empty()
	for _, s := range steps[:keep] {
		switch s := s.(type) {
		case path.PathStepAttributeName:
			out = out.AtName(string(s))
		case path.PathStepElementKeyInt:
			out = out.AtListIndex(int(s))
		case path.PathStepElementKeyString:
			out = out.AtMapKey(string(s))
		default:
			return p
		}
	}
	return out
}

// enumValidator accepts one of values. It is stringvalidator.OneOf with a
// message in full sentences; its description keeps OneOf's form, which
// enums_test.go reads.
type enumValidator struct{ values []string }

func oneOfValidator(values ...string) enumValidator { return enumValidator{values: values} }

func (v enumValidator) Description(context.Context) string {
	quoted := make([]string, len(v.values))
	for i, s := range v.values {
		quoted[i] = strconv.Quote(s)
	}
	return "value must be one of: [" + strings.Join(quoted, " ") + "]"
}
func (v enumValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (v enumValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() || slices.Contains(v.values, req.ConfigValue.ValueString()) {
		return
	}
	addAttrError(&resp.Diagnostics, req.Path, "Invalid value",
		fmt.Sprintf("%q is not one of %s.", req.ConfigValue.ValueString(), strings.Join(v.values, ", ")))
}
