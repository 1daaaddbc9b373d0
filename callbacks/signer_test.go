package callbacks

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The example from the Standard Webhooks specification.
func TestSignMatchesTheSpecExample(t *testing.T) {
	got, err := Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
		time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("signature %s, want %s", got, want)
	}
	if _, err := Sign("whsec_not base64!", "id", time.Now(), nil); err == nil {
		t.Fatal("a malformed secret signed")
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0}, {"120", 2 * time.Minute}, {"-5", 0}, {"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
	} {
		if got := retryAfter(c.in, now); got != c.want {
			t.Errorf("retryAfter(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// A client error names the webhook URL without what may be a token: the
// query, the credentials, and the path (Discord's and Slack's tokens are
// in it), wherever the message quotes it; the host stays.
func TestClientErrorsDropTheURLsSecrets(t *testing.T) {
	hook := "https://u:p@hooks.example/api/webhooks/123/t0kenPath?token=s3cret#x"
	err := withoutURLSecrets(&url.Error{Op: "Post", URL: hook,
		Err: errors.New("redirect to /api/webhooks/123/t0kenPath refused")}, hook)
	msg := err.Error()
	for _, secret := range []string{"s3cret", "u:p", "t0kenPath", "123"} {
		if strings.Contains(msg, secret) {
			t.Fatalf("error %q shows %q", msg, secret)
		}
	}
	if !strings.Contains(msg, "hooks.example") {
		t.Fatalf("error %q does not say where", msg)
	}
}
