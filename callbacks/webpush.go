package callbacks

import (
	"context"
	"io"
	"net/http"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"

	"akk/domain"
)

// WebPush sends Web Push messages (RFC 8030) encrypted for the browser
// (RFC 8291) and signed with the VAPID keys (RFC 8292), through
// webpush-go. It implements domain.PushSender.
type WebPush struct {
	// Contact is the VAPID "sub" claim: how a push service reaches the
	// sender's operator (a mailto: or https: URL).
	Contact string
	Client  *http.Client
}

// NewKeys makes a VAPID key pair.
func (w WebPush) NewKeys() (domain.VAPIDKeys, error) {
	priv, pub, err := webpush.GenerateVAPIDKeys()
	return domain.VAPIDKeys{Public: pub, Private: priv}, err
}

// Send delivers one push: urgent (a person is waited on), kept by the push
// service up to 10 minutes while the device is away, one per Turn and
// event type (the topic replaces an undelivered older one).
func (w WebPush) Send(ctx context.Context, s domain.PushSubscription, payload []byte, keys domain.VAPIDKeys) (int, error) {
	client := w.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := webpush.SendNotificationWithContext(ctx, payload, &webpush.Subscription{Endpoint: s.Endpoint,
		Keys: webpush.Keys{P256dh: s.P256dh, Auth: s.Auth}}, &webpush.Options{
		HTTPClient: client, Subscriber: w.Contact, VAPIDPublicKey: keys.Public, VAPIDPrivateKey: keys.Private,
		TTL: 600, Urgency: webpush.UrgencyHigh})
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, nil
}
