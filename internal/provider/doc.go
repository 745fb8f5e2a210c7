// Package provider is the Terraform face of the mesh provider: the
// provider's configuration, the resources' schemas and models, and the
// lifecycle that turns a model into intent, calls the translator and the
// engine, and sets state. Its files, by concern (docs/design.md, "Where
// things live"):
//
//   - a resource's schema and model: <resource>_resource.go (the traffic
//     policy's in traffic_policy_schema.go, traffic_policy_model.go and
//     resolved_destination.go, the one-line form of its machine data),
//     the data sources' *_data_source.go, the routing_summary function
//     (routing_function.go), and the attribute pieces they share
//     (routing.go, enums.go, validators.go, placement.go, owner_id.go);
//   - the skeleton every resource shares and the lifecycle of those that
//     write translated objects (intent_resource.go: resourceBase,
//     intentLifecycle), with what a plan checks (objects.go,
//     limits_plan.go, composition_plan.go, drift_checks.go) and
//     state_upgrade.go;
//   - the provider and its configuration (provider.go, which makes the
//     run-scoped state of internal/runstate; provider_validate.go,
//     validate_config.go, registry.go, virtual_destination_record.go,
//     workspace.go, delivery.go: each cluster's delivery, push or pull);
//   - import and discovery: the Terraform side (intent_import.go,
//     identity.go, list_resources.go, intent_config.go, cluster_import.go)
//     of the search in internal/discovery;
//   - the cases a plan writes for Istio's simulation (cases.go).
//
// Rendering is internal/render's; translation is internal/translate's;
// every cluster read and write is internal/engine's.
package provider
