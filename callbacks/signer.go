// Package callbacks delivers events to hosts: Standard Webhooks signing, the
// outbox dispatcher, and the SSE hub.
package callbacks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Sign returns the Standard Webhooks `webhook-signature` value for one
// delivery: "v1," + base64(HMAC-SHA256(key, "{id}.{timestamp}.{body}")) where
// key is the base64 part of the whsec_ secret.
func Sign(secret, id string, at time.Time, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return "", fmt.Errorf("decode webhook secret: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(strconv.FormatInt(at.Unix(), 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}
