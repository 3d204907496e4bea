package fielderr

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorAs(t *testing.T) {
	sentinel := errors.New("invalid input")
	err := fmt.Errorf("create job: %w", &Error{Field: "url", Reason: "must be http or https", Err: sentinel})
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("errors.As: got false, want the *Error in %v", err)
	}
	if fe.Field != "url" || fe.Reason != "must be http or https" {
		t.Errorf("got field %q reason %q, want url / must be http or https", fe.Field, fe.Reason)
	}
	if !errors.Is(err, sentinel) {
		t.Errorf("errors.Is(err, sentinel): got false, want true through Unwrap")
	}
	if got, want := Newf("k", "%d is outside 1..%d", 0, 100).Error(), "k: 0 is outside 1..100"; got != want {
		t.Errorf("Error(): got %q, want %q", got, want)
	}
}
