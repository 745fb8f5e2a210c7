package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var objectAsOptions = basetypes.ObjectAsOptions{}

func unstructuredStringMap(obj map[string]any, fields ...string) (map[string]string, bool, error) {
	return unstructured.NestedStringMap(obj, fields...)
}
