package domain

import "context"

// Principal is who made a request: the operator (full access) or one host.
type Principal struct {
	Operator bool
	HostID   string
	// Conversation is the caller's AKK-Conversation header, recorded on the
	// records it creates and echoed in webhooks about them.
	Conversation string
}

// CanSeeHost reports whether p may see records owned by hostID.
func (p Principal) CanSeeHost(hostID string) bool {
	return p.Operator || (p.HostID != "" && p.HostID == hostID)
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal in ctx, if any.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// RequireOperator refuses a caller that is not the operator.
func RequireOperator(ctx context.Context) error { return requireOperator(ctx) }

func requireOperator(ctx context.Context) error {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return E(CodeUnauthorized, "a bearer token is required")
	}
	if !p.Operator {
		return E(CodeForbidden, "this action needs the operator token")
	}
	return nil
}

func requirePrincipal(ctx context.Context) (Principal, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return Principal{}, E(CodeUnauthorized, "a bearer token is required")
	}
	return p, nil
}
