// Package discovery finds, in the clusters, the intents of one kind and
// the configuration each keeps beside its objects: what `terraform import`
// and the list resources (`terraform query`) of the provider need, without
// Terraform's requests and responses.
//
//   - SearchInstances lists the instances of one intent name, each with
//     its kept configurations and objects, and the hand-written objects
//     of its names; PickInstance and ChooseImport decide which one an
//     import takes, or why none.
//   - ListIntents lists a kind's intents by name, each with its clusters
//     and its instances as SearchInstances finds them (Listed), so that
//     importing what a list found needs no second search.
//   - ConfigJSON and ConfigValue encode and decode the configuration kept
//     in the clusters (ConfigAnnotation; a traffic policy's is in its
//     contribution).
//
// Every read goes through the engine; the kind's facts (what it writes,
// where it keeps its configuration) come from intentkind. The provider
// calls it from ImportState and List and fills Terraform's state.
package discovery
