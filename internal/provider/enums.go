package provider

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Enumerated attributes take their values, and the list in their
// description, from the translator's exported lists (cluster.MTLSModes,
// trafficpolicy.TLSModes, ...), so the schema, the docs generated from it
// and the translator cannot disagree. enums_test.go feeds every value the
// schema accepts to the translator.

// oneOf renders values for a description: "`A`, `B` or `C`".
func oneOf(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = "`" + v + "`"
	}
	if len(quoted) == 1 {
		return quoted[0]
	}
	return strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
}

// enumDescription is desc followed by the accepted values.
func enumDescription(desc string, values []string) string {
	return fmt.Sprintf("%s One of %s.", desc, oneOf(values))
}

// enumString is an optional string attribute that takes one of values.
func enumString(desc string, values []string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: enumDescription(desc, values),
		Optional:            true,
		Validators:          []validator.String{oneOfValidator(values...)},
	}
}

// enumStrings is an optional list attribute whose elements take one of
// values.
func enumStrings(desc string, values []string) schema.ListAttribute {
	return schema.ListAttribute{
		MarkdownDescription: fmt.Sprintf("%s Each one of %s.", desc, oneOf(values)),
		Optional:            true,
		ElementType:         types.StringType,
		Validators:          []validator.List{listvalidator.ValueStringsAre(oneOfValidator(values...))},
	}
}

// hclList renders a list of strings as HCL: ["a", "b"].
func hclList(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = fmt.Sprintf("%q", v)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// hclMap renders a map of strings as HCL: { a = "b" }.
func hclMap(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s = %q", k, m[k]))
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}
