package provider

import (
	"bytes"
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"
)

// The version stamped at build (main.version, from make install or
// goreleaser) is what the provider reports: to Terraform in its metadata,
// and in the log of every run that configures it (TF_LOG=INFO), which is
// where a user checks which build a run used. TestAccInstall_freshClone
// reads the same line from a binary built by make install.
func TestProviderReportsItsVersion(t *testing.T) {
	ctx := context.Background()
	p := New("1.2.3")()

	var meta provider.MetadataResponse
	p.Metadata(ctx, provider.MetadataRequest{}, &meta)
	if meta.Version != "1.2.3" {
		t.Errorf("metadata version %q, want 1.2.3", meta.Version)
	}

	var sr provider.SchemaResponse
	p.Schema(ctx, provider.SchemaRequest{}, &sr)
	typ := sr.Schema.Type().TerraformType(ctx).(tftypes.Object)
	nulls := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		nulls[name] = tftypes.NewValue(at, nil)
	}
	var logs bytes.Buffer
	req := provider.ConfigureRequest{Config: tfsdk.Config{Schema: sr.Schema, Raw: tftypes.NewValue(typ, nulls)}}
	p.Configure(tflogtest.RootLogger(ctx, &logs), req, &provider.ConfigureResponse{})

	entries, err := tflogtest.MultilineJSONDecode(&logs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e["@level"] == "info" && e["@message"] == "terraform-provider-mesh 1.2.3" && e["version"] == "1.2.3" {
			return
		}
	}
	t.Fatalf("no info entry \"terraform-provider-mesh 1.2.3\" with version 1.2.3 in the log of Configure:\n%s", logs.String())
}
