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

func TestClientErrorsDropTheURLsQuery(t *testing.T) {
	err := withoutQuery(&url.Error{Op: "Post", URL: "https://u:p@hooks.example/akk?token=s3cret#x", Err: errors.New("connection refused")})
	if msg := err.Error(); strings.Contains(msg, "s3cret") || strings.Contains(msg, "u:p") || !strings.Contains(msg, "hooks.example/akk") {
		t.Fatalf("error %q", msg)
	}
}
