// Package deploy holds what runs brisvox outside a developer's machine:
// the serving image (Dockerfile, built from the repository root), the
// Kubernetes manifests (k8s/) and the SIP balancer's configuration
// (kamailio/). It takes no part in a call and has no code: its test
// decodes every manifest strictly into the Kubernetes API types and checks
// their invariants (probes, the preStop drain against serve's --drain, the
// operator token's Secret, the cluster provider's RBAC, the disruption
// budget) and the Dockerfile (its stages, user, health check, ports and
// that its pins are scripts/setup.sh's), and runs the build stage's go
// build and the built binary's flag set and agent check. README.md says
// what is checked and what is not (Docker is not run).
package deploy
