// Package operatorpb holds the operator's messages between the nodes of a
// fleet as protobuf, which protoactor-go's remote carries: the list of a
// node's calls, a call's detail (its actor tree, its turns' marks), the
// commands (restart a stage, hang up, drain, undrain) and the error
// answer with its code. operator.proto is the source; operator.pb.go is
// generated from it by protoc and protoc-gen-go (`go tool task proto`)
// and checked in; TestGeneratedIsCurrent checks the two agree.
package operatorpb
