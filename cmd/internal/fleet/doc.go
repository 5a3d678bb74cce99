// Package fleet joins the nodes of a deployment into one operator view
// on protoactor-go's cluster: the operator API and console of any node
// list and command the calls of every node (serve.Fleet).
//
// Each node runs an actor system of its own here, with protoactor's
// remote and cluster (not serve's call-tree system: the calls, their
// actors and their audio stay on their node and never cross the
// cluster). On it a named "operator" actor answers the operator's
// protobuf messages (operatorpb) by calling the node's serve methods.
// The Fleet polls every other member of the cluster's member list for
// its calls and its node entry (Config.Refresh), so Others answers from
// memory; Describe, Restart, Hangup, Drain and Undrain are requests to
// the owning member's operator actor, its error codes mapped back to
// serve's errors. A member drops out of the view when the membership
// says it left, or when it has not answered for Config.DropAfter.
//
// Membership is a protoactor cluster provider: its automanaged one (a
// list of seeds, no external service), its Kubernetes one (pods labelled
// by the provider through the API server) or, in tests, its in-process
// one (WithProvider).
package fleet
