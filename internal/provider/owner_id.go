package provider

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Every intent instance gets a random ID at create, kept in state as its
// id. Its objects carry it (mesh-intent.io/owner-id), so two Terraform
// states declaring intents of the same name, or the old and new instance
// of a replaced resource, never take each other's objects for their own.

func newOwnerID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// ownerIDOf returns the instance ID when it is known.
func ownerIDOf(id types.String) string {
	if id.IsNull() || id.IsUnknown() {
		return ""
	}
	return id.ValueString()
}

func idAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "Random identity of this resource instance, set at create. Every object it owns carries it as label `mesh-intent.io/owner-id`.",
		Computed:            true,
		PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
}
