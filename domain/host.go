package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// Host is an authenticated controller that receives webhooks.
type Host struct {
	ID         string
	Name       string
	WebhookURL string
	Secret     string // whsec_…; private, signs deliveries
	// WebhookHeaders go with every delivery; private like Secret.
	WebhookHeaders map[string]string
	// WebhookEvents is the subscription (empty: every type).
	WebhookEvents []string
	// DeliveryNode is the one fleet node that delivers its webhooks ('':
	// any).
	DeliveryNode    string
	CreatedAt       time.Time
	SecretRotatedAt time.Time
	Revision        int64
}

// HostCredentials is a new host with its token and secret, shown once.
type HostCredentials struct {
	Host  Host
	Token string
}

// NewHost is the input of RegisterHost.
type NewHost struct {
	Name       string `validate:"required,max=100"`
	WebhookURL string `validate:"required,max=2048"`
	// WebhookHeaders and WebhookEvents are optional (see HostWebhook).
	WebhookHeaders map[string]string
	WebhookEvents  []string
	DeliveryNode   string
}

// HashToken is how tokens are kept: only their SHA-256 is stored. Tokens carry
// 256 bits of randomness, so a plain hash is enough.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
